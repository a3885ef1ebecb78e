"""probe/values.py: secret names, argv redaction, scrubbing, and renderings that never raise."""
import enum
import json
import math

import pytest

from flagtrace.probe import values
from flagtrace.probe.values import REDACTED, describe, is_secret_name, plain, redact_argv, safe_repr


@pytest.mark.parametrize("name", [
    "api_key", "API_KEY", "--api-key", "apikey", "openai_api_key", "hf_token", "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN", "--hf-token", "access_token", "token", "key", "KEY", "secret", "client_secret",
    "AWS_SECRET_ACCESS_KEY", "password", "db_passwd", "credentials_path", "private_key", "ssh_key",
])
def test_secret_names(name):
    assert is_secret_name(name)


@pytest.mark.parametrize("name", [
    "", None, "page_size", "tokenizer", "tokenizer_path", "skip_tokenizer_init", "max_tokens",
    "max_new_tokens", "num_tokens", "token_budget", "ssl_keyfile", "ssl_certfile", "key_cache",
    "kv_cache_dtype", "keyword", "monkey", "hotkey", "turkey", "keys", "sk",
])
def test_ordinary_names(name):
    assert not is_secret_name(name)


def test_redact_argv_separate_and_inline_values():
    argv = ["--model", "m", "--api-key", "sk-1", "--api-key=sk-2", "--hf-token", "hf_x", "--page-size", "16",
            "--password=", "-k", "x"]
    assert redact_argv(argv) == ["--model", "m", "--api-key", REDACTED, "--api-key=" + REDACTED,
                                 "--hf-token", REDACTED, "--page-size", "16", "--password=" + REDACTED, "-k", "x"]


def test_redact_argv_secret_flag_last_and_non_secret_equals():
    assert redact_argv(["--api-key"]) == ["--api-key"]
    assert redact_argv(["--tokenizer=t", "x=y", "--key=value"]) == ["--tokenizer=t", "x=y", "--key=" + REDACTED]
    assert redact_argv([]) == []


def test_describe_redacts_by_name_but_not_empty_values():
    assert describe("sk-abcdef", "api_key") == {"repr": REDACTED, "value": REDACTED, "type": "str"}
    assert describe(None, "api_key")["repr"] == "None"
    assert describe("", "api_key")["repr"] == "''"
    assert describe(False, "hf_token")["value"] is False
    assert describe("sk-abcdef", "model") == {"repr": "'sk-abcdef'", "value": "sk-abcdef", "type": "str"}


def test_scrub_replaces_remembered_secrets_and_keeps_json_valid():
    describe("sk-scrub-0001", "api_key")
    redact_argv(["--hf-token", 'tok"with\\quote'])
    values.redact_env({"MY_TOKEN": "envtok-99999", "PATH": "/bin"})
    doc = {"repr": "Config(api_key='sk-scrub-0001', x=1)", "argv": ["--hf-tok", 'tok"with\\quote'],
           "seq": 123456, "env": "envtok-99999", "nested": {"deep": ["a sk-scrub-0001 b"]}}
    text = values.scrub(json.dumps(doc))
    back = json.loads(text)
    assert "sk-scrub-0001" not in text and "envtok-99999" not in text and "with\\\\quote" not in text
    assert back["repr"] == "Config(api_key='%s', x=1)" % REDACTED
    assert back["argv"][1] == REDACTED and back["seq"] == 123456


def test_number_like_and_short_secrets_are_not_scrubbed_from_the_text():
    describe("123456", "password")  # would match inside numbers
    describe(123456, "key")
    describe("abc", "api_key")  # too short to scrub safely
    text = values.scrub(json.dumps({"seq": 1234567, "line": 123456, "word": "abcdef abc"}))
    assert json.loads(text) == {"seq": 1234567, "line": 123456, "word": "abcdef abc"}


# -- never raising ---------------------------------------------------------------------------
class BadRepr:
    def __repr__(self):
        raise RuntimeError("no repr for you")


class BadReprType:
    def __repr__(self):
        return 42


class BadClass:
    @property
    def __class__(self):
        raise RuntimeError("no class")


class BadEq:
    def __eq__(self, other):
        raise RuntimeError("no eq")

    __hash__ = object.__hash__


class BadList(list):
    def __len__(self):
        raise RuntimeError("no len")

    def __iter__(self):
        raise RuntimeError("no iter")


class BadDict(dict):
    def items(self):
        raise RuntimeError("no items")

    def __iter__(self):
        raise RuntimeError("no iter")


class NotBool:
    """Like an array: compares elementwise and refuses to be a bool."""

    def __eq__(self, other):
        return NotBool()

    def __ne__(self, other):
        return NotBool()

    def __bool__(self):
        raise ValueError("truth value is ambiguous")

    __hash__ = object.__hash__


class Color(enum.Enum):
    RED = "red"


# Built inside the test: pytest itself cannot hold some of these as parameters.
EVIL = {
    "repr raises": BadRepr, "repr not a str": BadReprType, "__class__ raises": BadClass, "__eq__ raises": BadEq,
    "list len/iter raise": lambda: BadList([1, 2]), "dict items raise": lambda: BadDict(a=1),
    "array-like": NotBool, "huge int": lambda: 10 ** 5000, "nan": lambda: float("nan"),
    "inf": lambda: float("inf"), "enum": lambda: Color.RED, "bytes": lambda: b"\xff\x00",
    "bytearray": lambda: bytearray(b"x" * 10000), "object": object, "type": lambda: type, "builtin": lambda: print,
    "iterator": lambda: iter([1]), "generator": lambda: (i for i in range(3)), "long str": lambda: "x" * 100000,
    "mixed dict": lambda: {1: 2, "a": {3}}, "recursive list": lambda: _recursive()[0],
    "recursive dict": lambda: _recursive()[1],
}


def _recursive():
    a = [1]
    a.append(a)
    d = {"self": None}
    d["self"] = d
    return [a, d]


@pytest.mark.parametrize("kind", sorted(EVIL))
@pytest.mark.parametrize("name", [None, "model", "api_key"])
def test_describe_never_raises(kind, name):
    out = describe(EVIL[kind](), name)
    assert set(out) == {"repr", "value", "type"}
    assert isinstance(out["repr"], str) and len(out["repr"]) < 400
    json.dumps(out, default=safe_repr)


def test_safe_repr_of_a_failing_repr():
    assert safe_repr(BadRepr()).startswith("<BadRepr instance at 0x")
    assert safe_repr(BadReprType()).startswith("<BadReprType instance at 0x")
    assert safe_repr(BadClass()).startswith("<")
    assert safe_repr(10 ** 5000).startswith("<unrepresentable int") or "..." in safe_repr(10 ** 5000)
    assert safe_repr(Color.RED) == "Color.RED"
    assert len(safe_repr("x" * 100000)) < 200


def test_plain_keeps_json_simple_values_only():
    assert plain(Color.RED) == "red"
    assert plain(float("nan")) is None
    assert plain([1, "a", None, [2, [3, [4]]]]) == [1, "a", None, [2, [3, [4]]]]
    assert plain(10 ** 5000) is None and plain(2 ** 64) == 2 ** 64
    assert plain({"a": 1, "b": [True]}) == {"a": 1, "b": [True]}
    assert plain({1: 2}) is None
    assert plain(list(range(65))) == list(range(65))
    assert plain("x" * 2001) is None
    assert plain(object()) is None
    assert plain(math.inf) == math.inf


def test_plain_copies_lists_and_config_objects_whole_up_to_a_marked_bound():
    import dataclasses

    from flagtrace.probe import values

    @dataclasses.dataclass
    class Inner:
        max_bs: int = 512
        api_key: str = "sk-abcdefgh"
        sizes: list = dataclasses.field(default_factory=lambda: list(range(1, 9)))

    @dataclasses.dataclass
    class Outer:
        graph: Inner = dataclasses.field(default_factory=Inner)
        name: str = "x"

    assert plain(Outer()) == {"graph": {"max_bs": 512, "api_key": values.REDACTED, "sizes": list(range(1, 9))},
                              "name": "x"}
    assert "sk-abcdefgh" in values._SECRET_VALUES  # scrubbed wherever else it appears
    long = list(range(values.MAX_ITEMS + 10))
    assert plain(long) == {"$truncated": {"length": values.MAX_ITEMS + 10, "kept": values.MAX_ITEMS},
                           "items": long[:values.MAX_ITEMS]}
    deep = [[[[[[[[1]]]]]]]]
    assert plain(deep) == [[[[[[{"$truncated": {"depth": values.MAX_DEPTH}}]]]]]]
    assert plain(Outer) is None  # a class is not a config object


def test_a_secret_that_is_also_a_word_of_the_document_keeps_it_readable():
    """issue 24, found by the option sweep (``--admin-api-key flagtrace`` on SGLang 0.5.23, ``--hf-token
    flagtrace`` on vLLM 0.34.0): the secret was scrubbed from the JSON text, "flagtrace/trace@1"
    included, and the trace was refused as "not a flagtrace trace". Values are scrubbed; the schema
    and the keys stay."""
    describe("flagtrace", "admin_api_key")
    doc = {"schema": "flagtrace/trace@1", "flagtrace": 1, "argv": ["--admin-api-key", "flagtrace"],
           "file": "/src/flagtrace/x.py", "list": [{"schema": "flagtrace"}]}
    try:
        back = json.loads(values.scrub(json.dumps(doc)))
    finally:  # remembered for the whole process: no other test's document may lose the word
        values._SECRET_VALUES.discard("flagtrace")
    assert back["schema"] == "flagtrace/trace@1" and back["flagtrace"] == 1
    assert back["argv"][1] == REDACTED and back["file"] == "/src/%s/x.py" % REDACTED
    assert back["list"] == [{"schema": REDACTED}]  # only the document's own schema is kept
