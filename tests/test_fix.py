"""flagtrace fix on an example program: candidates read from the explanation (a field read in an
``elif`` through a helper method, a constant a check compares with), each verified by a real
re-resolution, ranked by changes then side effects; pairs where no single change works; the
failures a user can meet."""
import json

from ft_support import PY, example, line_of, run_sub

SCRIPT = "fix_config.py"
WATCH = "fix_config:FixConfig"


def fix(args, extra=(), fmt="json", timeout=120):
    run = run_sub(["fix", "--format", fmt, "--watch", WATCH, *extra, "--", PY, example(SCRIPT), *args],
                  timeout=timeout)
    return run, (json.loads(run.out) if fmt == "json" and run.out.startswith("{") else None)


def changes(doc):
    return [f["changes"] for f in doc["fixes"]]


def test_an_override_is_made_to_stick_through_the_elif_only_the_condition_chain_reveals(no_leftovers):
    run, doc = fix(["--page-size", "64"])
    assert run.rc == 0, run
    assert doc["schema"] == "flagtrace/fix@1"
    [problem] = doc["problems"]
    assert (problem["kind"], problem["field"], problem["want"]) == ("overridden", "page_size", "64")
    # backend (flash, triton) and kv_cache_dtype (read via uses_fp8_cache(): fp8_e4m3, bf16); page_size
    # itself is the request, not a candidate
    assert doc["candidates_tried"] == 4
    assert problem["read"] == ["backend", "kv_cache_dtype", "page_size"]
    assert sorted(changes(doc)) == [["--backend flash"], ["--kv-cache-dtype fp8_e4m3"]]
    by = {f["changes"][0]: f for f in doc["fixes"]}
    kv = by["--kv-cache-dtype fp8_e4m3"]
    assert kv["verified"] is True and kv["outcome"] == "resolves"
    assert kv["reason"] == "kv_cache_dtype: a choice of --kv-cache-dtype"
    assert kv["command"] == [PY, example(SCRIPT), "--page-size", "64", "--kv-cache-dtype", "fp8_e4m3"]
    assert kv["side_effects"] == [{"field": "kv_cache_dtype", "old": "'auto'", "new": "'fp8_e4m3'"}]


def test_an_error_is_fixed_by_the_constant_its_check_compares_with(no_leftovers):
    # 63 (a neighbour of 64) hangs: it is killed at --timeout and counted; 65 fails the check
    run, doc = fix(["--speculative-algorithm", "eagle", "--max-batch", "128"], extra=["--timeout", "8"])
    assert run.rc == 0, run
    [problem] = doc["problems"]
    assert problem["kind"] == "error"
    assert problem["text"] == "ValueError: speculative decoding supports at most 64 requests at once"
    assert problem["read"] == ["speculative", "max_batch"]
    assert [f["changes"] for f in doc["failures"]] == [["--max-batch 63"]]
    first = doc["fixes"][0]
    assert first["changes"] == ["--max-batch 64"] and first["outcome"] == "resolves"
    assert first["reason"] == "max_batch: compared with 64 in the condition"
    assert first["side_effects"] == [{"field": "max_batch", "old": "128", "new": "64"}]
    assert ["--max-batch 65"] not in changes(doc)
    removed = [f for f in doc["fixes"] if f["changes"] == ["without --speculative-algorithm"]]
    assert removed and {"field": "draft_tokens", "old": "4", "new": "None"} in removed[0]["side_effects"]
    # more side effects rank later
    assert changes(doc).index(["without --speculative-algorithm"]) > changes(doc).index(["--max-batch 64"])


def test_a_wanted_value_no_single_change_reaches_is_reached_by_a_pair(no_leftovers):
    # page_size=64: asking for it is overridden (the elif), flash alone leaves 16; flash + asking works
    run, doc = fix([], extra=["--want", "page_size=64"])
    assert run.rc == 0, run
    [problem] = doc["problems"]
    assert (problem["kind"], problem["field"], problem["want"]) == ("want", "page_size", "64")
    assert all(len(c) == 2 for c in changes(doc))
    assert ["--backend flash", "--page-size 64"] in changes(doc)
    assert ["--kv-cache-dtype fp8_e4m3", "--page-size 64"] in changes(doc)


def test_terminal_report_shows_the_edited_command_and_side_effects(no_leftovers):
    run, _ = fix(["--speculative-algorithm", "eagle", "--max-batch", "128"], fmt="terminal", extra=["--timeout", "8"])
    assert run.rc == 0, run
    assert "problem: ValueError: speculative decoding supports at most 64 requests at once" in run.out
    assert "fix 1: --max-batch 64  → resolves" in run.out
    assert "side effects: max_batch 128 → 64" in run.out
    assert "could not judge: with --max-batch 63 did not finish within 8" in run.out


def test_explain_fix_adds_the_best_fix_to_the_overridden_field(no_leftovers):
    run = run_sub(["explain", "--fix", "--format", "json", "--watch", WATCH, "--", PY, example(SCRIPT),
                   "--page-size", "64"], timeout=120)
    assert run.rc == 0, run
    [field] = [f for f in json.loads(run.out)["fields"] if f["field"] == "page_size"]
    assert field["changes"][-1]["line"] == line_of(SCRIPT, "self.page_size = 1")
    assert field["fix"]["changes"] in (["--backend flash"], ["--kv-cache-dtype fp8_e4m3"])
    assert field["fix"]["outcome"] == "resolves"


def test_no_verified_fix_names_what_the_deciding_code_read(no_leftovers):
    # draft_tokens has no option, and only speculative decoding sets it
    run, doc = fix(["--speculative-algorithm", "eagle", "--max-batch", "32"], extra=["--want", "draft_tokens=8"])
    assert run.rc == 1, run
    assert doc["fixes"] == [] and doc["problems"][0]["read"] == ["speculative", "draft_tokens"]
    run, _ = fix(["--speculative-algorithm", "eagle", "--max-batch", "32"], fmt="terminal",
                 extra=["--want", "draft_tokens=8"])
    assert "no verified fix among" in run.out and "the deciding code read: speculative, draft_tokens" in run.out
    assert "draft_tokens has no option of its own" in run.out


def test_want_naming_no_field_is_a_usage_error(no_leftovers):
    run, _ = fix(["--page-size", "64"], extra=["--want", "page_sise=64"])
    assert run.rc == 64, run
    assert run.err.strip() == ("flagtrace: page_sise is not a field of this command's config; closest: "
                               "page_size") and "Traceback" not in run.err
    run, _ = fix(["--page-size", "64"], extra=["--want", "page_size"])
    assert run.rc == 64 and "--want takes FIELD=VALUE" in run.err, run


def test_nothing_to_fix(no_leftovers):
    run, doc = fix(["--backend", "flash", "--page-size", "64"])
    assert run.rc == 0, run
    assert doc["problems"] == [] and doc["fixes"] == [] and doc["candidates_tried"] == 0


def test_fix_in_markdown(no_leftovers):
    from markdown_it import MarkdownIt

    run, _ = fix(["--page-size", "64"], fmt="markdown")
    assert run.rc == 0, run
    tokens = MarkdownIt("commonmark").parse(run.out)
    fences = [t.content.strip() for t in tokens if t.type == "fence"]
    assert fences[1:] == ["%s %s --page-size 64 --backend flash" % (PY, example(SCRIPT)),
                          "%s %s --page-size 64 --kv-cache-dtype fp8_e4m3" % (PY, example(SCRIPT))]
