"""analysis/conditions.py on small source strings: the chain of conditions leading to a line."""
import ast
import textwrap

import pytest

from flagtrace.analysis import conditions as cond


def src(text):
    return textwrap.dedent(text).lstrip("\n")


def at(text, marker):
    """1-based line of the (only) line containing ``marker``."""
    hits = [i for i, line in enumerate(text.splitlines(), 1) if marker in line]
    assert len(hits) == 1, (marker, hits)
    return hits[0]


def chain(text, marker):
    func, found = cond.chain_at(text, at(text, marker))
    return [(c.keyword, c.holds, c.text(), c.line) for c in found]


def texts(text, marker):
    return [c[2] for c in chain(text, marker)]


IF_CHAIN = src('''
    def choose(self):
        if self.attention != "auto":
            pass
        elif self.device == "cpu":
            self.attention = "torch_native"  # CPU
        elif self.model.startswith("hybrid"):
            self.attention = "flash"  # HYBRID
        else:
            self.attention = "triton"  # ELSE
        self.done = True  # AFTER
''')


def test_if_branch():
    text = src('''
        def f(self):
            if self.a == 1:
                self.b = 2  # HERE
    ''')
    assert chain(text, "# HERE") == [("if", True, "self.a == 1", 2)]


def test_first_elif():
    assert chain(IF_CHAIN, "# CPU") == [("if", False, "self.attention == 'auto'", 2),
                                        ("elif", True, 'self.device == "cpu"', 4)]


def test_second_elif_negates_every_earlier_test():
    assert chain(IF_CHAIN, "# HYBRID") == [
        ("if", False, "self.attention == 'auto'", 2),
        ("elif", False, "self.device != 'cpu'", 4),
        ("elif", True, 'self.model.startswith("hybrid")', 6)]


def test_else_negates_every_test():
    assert texts(IF_CHAIN, "# ELSE") == ["self.attention == 'auto'", "self.device != 'cpu'",
                                         'not (self.model.startswith("hybrid"))']


def test_after_the_chain_no_condition():
    assert chain(IF_CHAIN, "# AFTER") == []


def test_else_containing_an_if_is_not_an_elif():
    text = src('''
        def f(cfg):
            if cfg.a:
                x = 1
            else:
                if cfg.b:
                    cfg.c = 1  # HERE
    ''')
    assert chain(text, "# HERE") == [("if", False, "not (cfg.a)", 2), ("if", True, "cfg.b", 5)]


def test_nested_ifs():
    text = src('''
        def f(cfg):
            if cfg.a is None:
                if cfg.b in ("x", "y"):
                    if not cfg.c:
                        cfg.d = 1  # HERE
    ''')
    assert texts(text, "# HERE") == ["cfg.a is None", 'cfg.b in ("x", "y")', "not cfg.c"]


def test_negations_read_naturally():
    text = src('''
        def f(cfg):
            if not cfg.enabled:
                pass
            elif cfg.n < 4:
                pass
            elif cfg.name is not None:
                pass
            elif cfg.mode not in ("a", "b"):
                pass
            elif cfg.x and cfg.y:
                pass
            else:
                cfg.z = 1  # HERE
    ''')
    assert texts(text, "# HERE") == ["cfg.enabled", "cfg.n >= 4", "cfg.name is None",
                                     "cfg.mode in ('a', 'b')", "not (cfg.x and cfg.y)"]


# -- early exits ---------------------------------------------------------------------------
GUARDS = src('''
    def f(self):
        if self.a is None:
            return
        if self.b:
            raise ValueError("b")
        if self.c:
            self.log = 1
        self.x = 1  # HERE
''')


def test_guards_with_early_return_and_raise():
    found = chain(GUARDS, "# HERE")
    assert [(k, h, line) for k, h, _, line in found] == [("guard", False, 2), ("guard", False, 4)]
    assert [c[2] for c in found] == ["self.a is not None  [else it returned earlier]",
                                     "not (self.b)  [else it returned earlier]"]


def test_if_without_exit_is_not_a_guard():
    assert "self.c" not in " ".join(texts(GUARDS, "# HERE"))


def test_guard_after_the_line_does_not_count():
    text = src('''
        def f(self):
            self.x = 1  # HERE
            if self.a:
                return
    ''')
    assert chain(text, "# HERE") == []


def test_continue_in_a_loop_is_a_guard():
    text = src('''
        def f(cfg):
            for item in cfg.items:
                if item.skip:
                    continue
                cfg.seen = item  # HERE
    ''')
    assert texts(text, "# HERE") == ["for item in cfg.items", "not (item.skip)  [else it returned earlier]"]


@pytest.mark.xfail(strict=True, reason="an if/elif chain whose every branch exits is not read as guards yet")
def test_elif_chain_of_early_exits():
    text = src('''
        def f(cfg):
            if cfg.a:
                return
            elif cfg.b:
                return
            cfg.x = 1  # HERE
    ''')
    assert texts(text, "# HERE") == ["not (cfg.a)  [else it returned earlier]",
                                     "not (cfg.b)  [else it returned earlier]"]


# -- loops, try, with, assert, ternary --------------------------------------------------------
def test_for_and_while():
    text = src('''
        def f(cfg):
            for name, value in cfg.overrides.items():
                setattr(cfg, name, value)  # FOR
            while cfg.budget > cfg.need:
                cfg.budget -= 1  # LOOPBODY
            else:
                cfg.spent = True  # WHILEELSE
    ''')
    assert chain(text, "# FOR") == [("for", None, "for name, value in cfg.overrides.items()", 2)]
    assert chain(text, "# LOOPBODY") == [("while", True, "cfg.budget > cfg.need", 4)]
    assert chain(text, "# WHILEELSE") == []


def test_try_except_else_finally():
    text = src('''
        def f(cfg):
            try:
                cfg.n = int(cfg.raw)  # BODY
            except (ValueError, TypeError) as exc:
                cfg.n = 0  # EXCEPT
            except:
                cfg.n = -1  # BARE
            else:
                cfg.ok = True  # ELSE
            finally:
                cfg.tried = True  # FINALLY
    ''')
    assert chain(text, "# BODY") == []
    assert chain(text, "# EXCEPT") == [("except", True, "except (ValueError, TypeError)", 4)]
    assert chain(text, "# BARE") == [("except", True, "except (any)", 6)]
    assert chain(text, "# ELSE") == []
    assert chain(text, "# FINALLY") == []


def test_if_inside_with_and_try():
    text = src('''
        def f(cfg):
            with open(cfg.path) as fh:
                try:
                    if cfg.strict:
                        cfg.mode = "strict"  # HERE
                except OSError:
                    pass
    ''')
    assert texts(text, "# HERE") == ["cfg.strict"]


def test_assert_before_the_line():
    text = src('''
        def f(cfg):
            assert cfg.tp_size % 2 == 0, "even"
    ''')
    assert chain(text, "assert cfg.tp_size") == [("assert", False, "assert cfg.tp_size % 2 == 0", 2)]


def test_ternary():
    text = src('''
        def f(cfg):
            cfg.mode = "remote" if cfg.endpoint.startswith("http") else "local"  # HERE
    ''')
    assert chain(text, "# HERE") == [("ternary", None, 'cfg.endpoint.startswith("http")', 2)]


def test_multi_line_test():
    text = src('''
        def f(cfg):
            if (cfg.speculative is not None
                    and cfg.model.startswith("hybrid")
                    and not cfg.disable_cache):
                cfg.page_size = 1  # HERE
    ''')
    found = chain(text, "# HERE")
    assert found == [("if", True, 'cfg.speculative is not None and cfg.model.startswith("hybrid") and '
                                  'not cfg.disable_cache', 2)]
    # a line inside the test itself has no condition yet
    assert chain(text, "and not cfg.disable_cache") == []


def test_backslash_continuation_test():
    text = src('''
        def f(cfg):
            if cfg.a and \\
                    cfg.b:
                cfg.c = 1  # HERE
    ''')
    assert texts(text, "# HERE") == ["cfg.a and cfg.b"]


def test_one_line_if():
    text = src('''
        def f(cfg):
            if cfg.k == 1: cfg.y = 1
    ''')
    assert texts(text, "cfg.y = 1") == ["cfg.k == 1"]


def test_innermost_function_only():
    text = src('''
        def outer(cfg):
            if cfg.a:
                def inner(c):
                    if c.b:
                        c.x = 1  # HERE
                inner(cfg)
    ''')
    func, found = cond.chain_at(text, at(text, "# HERE"))
    assert func.name == "inner"
    assert [c.text() for c in found] == ["c.b"]


def test_module_level_line():
    text = src('''
        import os
        if os.environ.get("X"):
            MODE = "x"  # HERE
    ''')
    func, found = cond.chain_at(text, at(text, "# HERE"))
    assert func is None and [c.text() for c in found] == ['os.environ.get("X")']


def test_match_case():
    text = src('''
        def f(cfg):
            match cfg.kind:
                case "a" | "b":
                    cfg.x = 1  # HERE
                case _:
                    pass
    ''')
    assert chain(text, "# HERE") == [("case", True, '"a" | "b"', 3)]


def test_unparsable_source():
    assert cond.chain_at("def f(:\n  pass\n", 2) == (None, [])
    assert cond.statement_at("def f(:\n  pass\n", 2) is None


# -- statements and what tests read ----------------------------------------------------------
def test_statement_at_joins_a_multi_line_statement_without_its_comments():
    text = src('''
        def f(cfg):
            raise ValueError(  # why
                "speculative decoding is not compatible "  # first half
                "with no_buffer"
            )
    ''')
    for line in (2, 3, 4, 5):
        assert cond.statement_at(text, line) == ('raise ValueError( "speculative decoding is not compatible " '
                                                 '"with no_buffer" )')


def test_statement_at_keeps_a_hash_inside_a_string():
    text = src('''
        def f(cfg):
            cfg.tag = ("#1"
                       + cfg.name)  # tag
    ''')
    assert cond.statement_at(text, 2) == 'cfg.tag = ("#1" + cfg.name)'


def test_statement_at_is_bounded():
    text = "x = [%s]\n" % ", ".join(str(i) for i in range(200))
    out = cond.statement_at(text, 1)
    assert len(out) == 240 and out.endswith("...")


def test_attribute_reads_keep_the_longest_known_field():
    node = ast.parse("self.graph.backend == 'auto' and self.page_size > 1 and other.x", mode="eval").body
    assert cond.attribute_reads(node, {"graph", "graph.backend", "page_size"}) == ["graph.backend", "page_size"]


def test_method_calls_plain_calls_and_names():
    node = ast.parse("self.uses_hybrid() and is_cuda() and flag", mode="eval").body
    assert cond.method_calls(node) == [("self", "uses_hybrid")]
    assert cond.plain_calls(node) == ["is_cuda"]
    assert set(cond.names_read(node)) == {"self", "is_cuda", "flag"}


def test_find_method_prefers_the_same_class():
    text = src('''
        class A:
            def check(self):
                return self.a
            def go(self):
                return self.check()
        class B:
            def check(self):
                return self.b
    ''')
    index = cond.source_index(text)
    go = cond.enclosing_function(index, 5)
    assert cond.find_method(index, go, "check").lineno == 2
    assert cond.find_method(index, None, "check").lineno == 2
    assert cond.find_method(index, go, "missing") is None


def test_a_guard_on_or_reads_as_the_facts_that_held():
    text = src('''
        def f(cfg, platform):
            if not platform.is_sm100 or cfg.backend is not None or cfg.n > 4:
                return {}
            return {"x": 1}  # HERE
    ''')
    assert texts(text, "# HERE") == [
        "platform.is_sm100 and cfg.backend is None and cfg.n <= 4  [else it returned earlier]"]


KEYED = src('''
    def decide(view):
        declared = {"uses_cache": True}  # INIT
        if view.strategy == "auto":
            if view.paging:
                declared["strategy"] = "extra"  # EXTRA
            else:
                declared["strategy"] = "none"  # NONE
                declared["overlap"] = False
        return declared  # RETURN

    def provider(view):
        backend = "triton"
        return {
            "backend": backend,
            "page": 64 if backend == "trtllm" else 1,  # PAGE
        }  # END
''')


@pytest.mark.parametrize("key, ran, marker", [
    ("strategy", ["INIT", "EXTRA"], "# EXTRA"),   # the branch that ran
    ("strategy", ["INIT", "NONE"], "# NONE"),
    ("strategy", [], "# NONE"),                   # without the lines that ran: the last one
    ("uses_cache", ["INIT", "EXTRA"], "# INIT"),
])
def test_key_line_is_the_line_that_stored_the_key(key, ran, marker):
    lines = [at(KEYED, "# " + m) for m in ran]
    assert cond.key_line(KEYED, at(KEYED, "# RETURN"), key, lines) == at(KEYED, marker)
    assert cond.key_line(KEYED, at(KEYED, "# RETURN"), "absent", lines) is None


def test_key_line_in_a_returned_dict_literal_and_the_ternary_direction():
    assert cond.key_line(KEYED, at(KEYED, "return {"), "page", []) == at(KEYED, "# PAGE")
    _, found = cond.chain_at(KEYED, at(KEYED, "# PAGE"))
    ternary = found[-1]
    assert ternary.keyword == "ternary"
    assert cond.ternary_holds(ternary.choice, 1) is False       # the value names the branch
    assert cond.ternary_holds(ternary.choice, 64) is True
    assert cond.ternary_holds(ternary.choice, local_reprs={"backend": "'triton'"}) is False
    assert cond.ternary_holds(ternary.choice) is None            # nothing to tell


def test_local_source_is_the_assignment_that_ran_last():
    from flagtrace.analysis.conditions import local_source

    text = """def constraints(view):
    page_size = view.page_size
    if view.backend == "flashmla":
        page_size = 64
    if view.backend == "trtllm_mla":
        if page_size not in [32, 64]:
            page_size = 64
    if page_size != view.page_size:
        return {"page_size": page_size}
    return {}
"""
    ran = [2, 3, 5, 6, 7, 8, 9]
    assert local_source(text, 9, ran) == ("page_size", 7)
    assert local_source(text, 9, [2, 3, 4, 5, 8, 9]) == ("page_size", 4)
    assert local_source(text, 9, [2, 3, 5, 8, 9]) == ("page_size", 2)
    assert local_source(text, 9, []) is None
    assert local_source("def f(d):\n    d['k'] = 1\n    return d\n", 2, [2, 3]) is None  # stores a constant


def test_a_value_inside_a_url_or_dotted_name_is_not_mentioned():
    from flagtrace.analysis.error_report import names_in as _names

    assert not _names("huggingface", "We couldn't connect to 'https://huggingface.co' to load this file")
    assert not _names("auto", "in transformers.models.auto.configuration_auto")
    assert not _names("cpu", "numa_bind_cpus must be set")
    assert _names("triton", "attention backend triton is not supported.")
    assert _names("fa3", "FlashAttention v3 (fa3) needs sm90")
