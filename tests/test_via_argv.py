"""Property: argv lists with quotes, ``$``, backticks, ``;``, newlines, tabs, unicode, raw
(undecodable) bytes, empty strings and leading dashes reach the remote target's ``sys.argv``
byte for byte through the real ssh transport (tests/sshd_support.py) and remote.run_remote.

1,000 argv lists in 10 transport invocations: each hypothesis example is a batch of 100 lists,
sent as one command line (their concatenation) to a tiny echo target that prints the bytes of
every sys.argv element; the batch is split back by the lists' lengths and compared list by list."""
import json
import os
import time

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import sshd_support
from flagtrace.launch import remote

pytestmark = pytest.mark.skipif(sshd_support.available() is not None, reason=str(sshd_support.available()))

LISTS_PER_CALL = 100
CALLS = 10

ECHO = """import json, os, sys
sys.stdout.write(json.dumps([os.fsencode(a).hex() for a in sys.argv[1:]]))
"""

SPECIAL = list("'\"$`;\n\t\\ |&<>(){}[]*?~#!%=,:-") + ["$(id)", "`id`", "${HOME}", "'\"'\"'", "\r\n", "\x7f",
                                                          "\u00e9", "\u4e2d", "\U0001f680", "\u200b", "\ufeff"]
RAW_BYTES = [chr(c) for c in range(0xDC80, 0xDD00)]  # surrogateescape: argv bytes that are not UTF-8
PIECE = st.one_of(
    st.sampled_from(SPECIAL),
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    st.sampled_from(RAW_BYTES),
)
TEXT = st.lists(PIECE, max_size=10).map("".join)
WORD = st.one_of(
    TEXT,
    st.just(""),
    st.builds(lambda dashes, rest: dashes + rest, st.sampled_from(["-", "--"]), TEXT),
    st.sampled_from(["-", "--", "-c", "-m", "--model-path", "--api-key=x", "-h", "--", "; rm -rf /tmp/x",
                     "a b", " ", "\t", "\n"]),
)
ARGV = st.lists(WORD, max_size=6)


@pytest.fixture(scope="module")
def echo_env(tmp_path_factory):
    server = sshd_support.acquire()
    script = tmp_path_factory.mktemp("echo") / "echo_argv.py"
    script.write_text(ECHO)
    stats = {"calls": 0, "lists": 0, "seconds": 0.0}
    yield server, str(script), stats
    try:
        print("\nargv round trip: %d lists in %d ssh invocations, %.1fs"
              % (stats["lists"], stats["calls"], stats["seconds"]))
        assert server.wait_idle() == [] and server.remote_leftovers() == []
    finally:
        sshd_support.release()


@settings(max_examples=CALLS, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture, HealthCheck.large_base_example])
@given(batch=st.lists(ARGV, min_size=LISTS_PER_CALL, max_size=LISTS_PER_CALL))
def test_argv_round_trips_byte_exactly_over_ssh(echo_env, batch):
    server, script, stats = echo_env
    flat = [word for argv in batch for word in argv]
    target = remote.parse_remote_command(["python3", script] + flat)
    assert target.args == flat  # nothing on this side interprets them
    started = time.monotonic()
    result = remote.run_remote(target, {"watch": [], "stop_at": [], "setup": [], "adapter": "generic"}, 60,
                               server.via())
    stats["seconds"] += time.monotonic() - started
    stats["calls"] += 1
    stats["lists"] += len(batch)
    assert result.returncode == 0, result.stderr
    got = [bytes.fromhex(h) for h in json.loads(result.stdout)]
    at = 0
    for argv in batch:
        want = [os.fsencode(word) for word in argv]
        assert got[at:at + len(argv)] == want, argv
        at += len(argv)
    assert at == len(got)
    # the trace records the same argv (before redaction of secrets, which none of these are)
    assert len(result.trace["target"]["argv"]) == len(flat) + 1
