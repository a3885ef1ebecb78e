"""``flagtrace run`` on real bash launch scripts (tests/scripts/), one per way a flag gets lost
on its way to the server. Each test asserts what the probed process actually received (from its
own record, written inside it) and what the report says about it.

Every script runs once for real (``--save-trace``); the terminal and JSON reports are then
rendered offline from the saved run (``--from``), as a user would re-read it.
"""
import glob
import json
import os
import subprocess
import sys

import pytest

from ft_support import PY, ROOT, flat, run_cli

SCRIPTS = os.path.join("tests", "scripts")
WATCH = ["--watch", "serve_config:ServeConfig", "--stop-at", "serve_config:start",
         "--watch", "json_config:LaunchConfig", "--stop-at", "json_config:start"]


class ScriptRun:
    def __init__(self, live, text, doc, saved):
        self.live, self.text, self.doc, self.saved = live, text, doc, saved

    @property
    def rc(self):
        return self.live.rc

    def pythons(self):
        return [p for p in self.doc["processes"] if p["kind"] == "python"]

    def one(self, script_word):
        found = [p for p in self.pythons() if any(script_word in a for a in p["argv"])]
        assert len(found) == 1, (script_word, [p["argv"] for p in self.pythons()])
        return found[0]

    def field(self, proc, name):
        return next(f for f in proc["analysis"]["fields"] if f["field"] == name)


def run_script(tmp_path, name, *options, env=None):
    saved = str(tmp_path / ("%s.run.json" % name))
    old = dict(os.environ)
    os.environ["PYTHON"] = PY
    os.environ.update(env or {})
    try:
        live = run_cli(["run", *WATCH, *options, "--save-trace", saved, "--width", "200", "--",
                        "bash", os.path.join(SCRIPTS, name)])
    finally:
        os.environ.clear()
        os.environ.update(old)
    text = run_cli(["run", "--from", saved, "--width", "200"])
    doc = run_cli(["run", "--from", saved, "--format", "json"])
    assert text.rc == live.rc == doc.rc, (live, text)
    assert live.out == text.out  # the saved run renders exactly as the live one did
    return ScriptRun(live, text.out, doc.doc, saved)


def test_broken_continuation(tmp_path):
    r = run_script(tmp_path, "broken_continuation.sh")
    p = r.one("serve_config.py")
    # bash passed the escaped space as an argument and ended the command there
    assert p["argv"] == [PY, "tests/examples/serve_config.py", "--model", "hybrid-7b", " "]
    assert "--page-size" not in p["argv"]
    assert r.rc == 2  # the program's own parser refused the stray ' '
    assert p["analysis"]["error"]["kind"] == "argparse"
    [finding] = [f for f in r.doc["script"]["findings"] if f["kind"] == "broken-continuation"]
    assert finding["line"] == 6 and finding["orphan_line"] == 7
    assert finding["never_reached"][str(p["pid"])] == ["--page-size", "64", "--cache-strategy", "extra_buffer"]
    assert "--page-size: command not found" in finding["shell_said"]
    text = flat(r.text)
    assert "broken_continuation.sh:6 ends with a space after the backslash: the command ended there" in text
    assert "never reached this process: --page-size 64 --cache-strategy extra_buffer" in text
    assert "line 7 ran as a command of its own" in text
    assert "argument 4 is ' ', only blanks" in text
    md = run_cli(["run", "--from", r.saved, "--format", "markdown"])
    assert md.rc == r.rc
    tokens = _markdown_tokens(md.out)
    cells = [t.content for t in tokens if t.type == "inline" and t.level >= 3]  # table cells
    row = cells[cells.index(str(p["pid"])):][:5]
    assert row[3] == "error" and row[4] == "the argument parser refused the command line: unrecognized arguments:"
    items = [t.content for t in tokens if t.type == "inline" and "space after the backslash" in t.content]
    assert items == ["line 6: `\"${PYTHON:-python3}\" tests/examples/serve_config.py --model hybrid-7b \\` — a space "
                     "after the backslash ended the command; line 7 ran as a command of its own; never reached the "
                     "process: --page-size 64 --cache-strategy extra_buffer"]
    assert "The argument parser refused the command line" in md.out  # the process's own error block


def _markdown_tokens(text):
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").parse(text)


def test_heredoc_quoting(tmp_path):
    r = run_script(tmp_path, "heredoc_quoting.sh")
    assert r.rc == 0
    p = r.one("serve_config.py")
    assert p["argv"] == [PY, "tests/examples/serve_config.py", "--model", "", "--page-size", "64"]
    parent = next(n for n in r.doc["processes"] if n["pid"] == p["parent"])
    assert parent["argv"] == ["bash", "-s"]  # the shell that read the heredoc started it
    model = r.field(p, "model")
    assert model["verdict"] == "honoured" and model["final"]["value"] == ""
    assert r.field(p, "page_size")["final"]["value"] == 64
    [finding] = [f for f in r.doc["script"]["findings"] if f["kind"] == "quoted-heredoc"]
    assert finding["names"] == ["MODEL"] and finding["line"] == 6
    text = flat(r.text)
    assert "argument 3 is empty (the value of --model): an unset or unexported variable?" in text
    assert "the heredoc delimiter is quoted (EOS), so $MODEL reaches whatever reads it unexpanded, where MODEL " \
           "is not set (never exported)" in text


def test_unexported_variable_not_received(tmp_path, monkeypatch):
    monkeypatch.delenv("SGLANG_ENABLE_SPEC_V2", raising=False)
    r = run_script(tmp_path, "unexported_variable.sh")
    assert r.rc == 0
    p = r.one("serve_config.py")
    # exported: received (so is the suite's HF_ENDPOINT, tests/conftest.py); the other: not
    assert p["env"] == {"CUDA_VISIBLE_DEVICES": "0,1", "HF_ENDPOINT": os.environ["HF_ENDPOINT"]}
    [finding] = [f for f in r.doc["script"]["findings"] if f["kind"] == "unexported"]
    assert finding["name"] == "SGLANG_ENABLE_SPEC_V2" and finding["line"] == 4 and finding["pids"] == [p["pid"]]
    text = flat(r.text)
    assert "env CUDA_VISIBLE_DEVICES=0,1" in text
    assert "SGLANG_ENABLE_SPEC_V2 is set on unexported_variable.sh:4 but never exported: this process did not " \
           "get it" in text


def _other_interpreter():
    """A real Python >= 3.9 other than this one (its version differs when one is installed)."""
    here = sys.version_info[:2]
    candidates = sorted(glob.glob("/root/.pyenv/versions/3.*/bin/python3.*")) + \
        [p for p in (_which("python3.%d" % m) for m in range(9, 15)) if p]
    fallback = None
    for cand in candidates:
        if cand.endswith("-config"):
            continue
        try:
            out = subprocess.run([cand, "-c", "import sys; print(sys.executable); print(sys.version_info[:2])"],
                                 capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out.returncode != 0:
            continue
        real, version = out.stdout.splitlines()[:2]
        major_minor = tuple(int(x) for x in version.strip("()").split(","))
        if major_minor < (3, 9):
            continue
        if major_minor != here:
            return os.path.realpath(real), "%d.%d" % major_minor
        fallback = fallback or (os.path.realpath(real), "%d.%d" % major_minor)
    return fallback or (os.path.realpath(sys.executable), "%d.%d" % here)


def _which(name):
    import shutil

    return shutil.which(name)


def test_wrong_venv_first_on_path(tmp_path):
    real, version = _other_interpreter()
    wrong = tmp_path / "wrong-venv"
    (wrong / "bin").mkdir(parents=True)
    os.symlink(real, str(wrong / "bin" / "python3"))
    (wrong / "pyvenv.cfg").write_text("home = %s\ninclude-system-site-packages = false\n" % os.path.dirname(real))
    r = run_script(tmp_path, "wrong_venv.sh", env={"WRONG_VENV": str(wrong)})
    assert r.rc == 0
    p = r.one("serve_config.py")
    assert p["argv"][0] == "python3"
    assert p["interpreter"] == str(wrong / "bin" / "python3")
    assert p["venv"] == str(wrong)
    assert p["python"].startswith(version + ".")
    assert p["status"] == "resolved"
    text = flat(r.text)
    assert "interpreter %s (Python %s" % (wrong / "bin" / "python3", version) in text
    assert "venv %s" % wrong in text


def test_json_argument_requoted(tmp_path):
    r = run_script(tmp_path, "json_requoted.sh")
    p = r.one("json_config.py")
    assert p["argv"][-2:] == ["--overrides", "'{\"page_size\": 64}'"]  # the quotes are in the value
    assert r.rc == 2  # resolution raised: json.loads refused the value
    error = p["analysis"]["error"]
    assert error["type"] == "JSONDecodeError"
    overrides = r.field(p, "overrides")  # received, and kept, with the quotes
    assert overrides["verdict"] == "honoured" and overrides["final"]["value"] == "'{\"page_size\": 64}'"
    [hint] = p["hints"]
    assert hint["kind"] == "quotes" and hint["index"] == 5
    text = flat(r.text)
    assert "carries quote characters: quotes inside a variable or a re-quoted string reach the program " \
           "literally" in text
    assert "JSONDecodeError: Expecting value" in text


def test_flag_and_value_in_one_argument(tmp_path):
    r = run_script(tmp_path, "joined_flag.sh")
    p = r.one("serve_config.py")
    assert p["argv"][1:] == ["tests/examples/serve_config.py", "--model", "tiny", "--page-size 64"]
    assert r.rc == 2
    assert p["analysis"]["error"]["kind"] == "argparse"
    assert "unrecognized arguments: --page-size 64" in p["analysis"]["error"]["message"]
    text = flat(r.text)
    assert "argument 4 '--page-size 64' is ONE argument holding a flag and its value" in text
    assert "the argument parser refused the command line: unrecognized arguments: --page-size 64" in text


def test_processes_that_cannot_be_probed_are_listed(tmp_path):
    r = run_script(tmp_path, "unprobed.sh")
    assert r.rc == 0
    unprobed = {" ".join(p["argv"][1:]): p["reason"] for p in r.pythons() if not p["probed"]}
    sleep = "-c import time; time.sleep(0.3)"
    assert "-I (isolated mode)" in unprobed["-I " + sleep]
    assert "-E ignores PYTHON* environment variables" in unprobed["-E " + sleep]
    assert "-S skips the site module" in unprobed["-S " + sleep]
    assert "reset PYTHONPATH (to '/nonexistent')" in unprobed[sleep]
    # the short-lived -I child of a probed parent, noted by the parent's bootstrap
    parent = r.one("subprocess.run")
    assert parent["probed"] and parent["status"] == "not watched"
    children = [p for p in r.pythons() if p["parent"] == parent["pid"]]
    assert [c["argv"][1:] for c in children] == [["-I", "-c", "pass"]]
    assert not children[0]["probed"] and "-I (isolated mode)" in children[0]["reason"]
    assert r.one("serve_config.py")["status"] == "resolved"
    assert r.doc["summary"]["not_probed"] == 5
    assert flat(r.text).count("NOT PROBED") == 5


def test_json_report_and_exit_code_with_strict(tmp_path):
    os.environ["PYTHON"] = PY
    try:
        argv = ["run", "--format", "json", "--watch", "serve_config:ServeConfig", "--stop-at", "serve_config:start",
                "--", PY, "tests/examples/serve_config.py", "--model", "hybrid-7b", "--page-size", "64"]
        plain = run_cli(argv)
        strict = run_cli(argv[:1] + ["--strict"] + argv[1:])
    finally:
        os.environ.pop("PYTHON", None)
    assert plain.rc == 0 and strict.rc == 1  # page_size 64 → 1 is overridden
    doc = plain.doc
    assert doc["schema"] == "flagtrace/run-analysis@1"
    [p] = doc["processes"]
    assert p["pid"] == doc["root_pid"] and p["parent"] is None
    assert p["analysis"]["summary"]["overridden"] == 1
    page = next(f for f in p["analysis"]["fields"] if f["field"] == "page_size")
    assert page["verdict"] == "overridden"
    json.dumps(doc)


def test_every_interpreter_of_the_tree(tmp_path):
    """One tree, several interpreters: each >= 3.9 is probed; older ones (when installed) are
    listed as such and run undisturbed."""
    found = {}
    for path in sorted(glob.glob("/root/.pyenv/versions/*/bin/python")):
        version = path.split("/versions/")[1].split("/")[0]
        found[tuple(int(x) for x in version.split(".")[:2])] = path
    new = [p for v, p in found.items() if v >= (3, 9)] or [PY]
    old = [p for v, p in found.items() if v < (3, 9)]
    script = tmp_path / "interpreters.sh"
    lines = ["cd %s" % ROOT]
    lines += ["%s tests/examples/serve_config.py --model hybrid-7b --page-size 64" % p for p in new]
    lines += ["%s -c 'print(\"old python ok\")'" % p for p in old]
    script.write_text("\n".join(lines) + "\n")
    saved = str(tmp_path / "run.json")
    r = run_cli(["run", "--watch", "serve_config:ServeConfig", "--stop-at", "serve_config:start",
                 "--save-trace", saved, "--format", "json", "--", "bash", str(script)])
    assert r.rc == 0, r
    procs = [p for p in r.doc["processes"] if p["kind"] == "python"]
    assert len(procs) == len(new) + len(old)
    for p in procs:
        if p["argv"][0] in new:
            assert p["status"] == "resolved", p
            page = next(f for f in p["analysis"]["fields"] if f["field"] == "page_size")
            assert page["verdict"] == "overridden"
        else:
            assert not p["probed"] and "older than 3.9" in p["reason"]
    with open(saved) as fh:
        assert json.load(fh)["stdout"].count("old python ok") == len(old)


def test_live_lets_the_process_run_on(tmp_path):
    os.environ["PYTHON"] = PY
    try:
        saved = str(tmp_path / "run.json")
        r = run_cli(["run", "--live", "--format", "json", "--save-trace", saved, "--watch", "serve_config:ServeConfig",
                     "--stop-at", "serve_config:start", "--", PY, "tests/examples/serve_config.py", "--page-size", "8"])
    finally:
        os.environ.pop("PYTHON", None)
    assert r.rc == 0, r
    [p] = r.doc["processes"]
    assert p["analysis"]["stop"] == "serve_config:start"  # resolution ended there ...
    assert p["after"] == {"status": "exited", "exit_code": 0}  # ... and the process went on
    with open(saved) as fh:
        assert "serving with" in json.load(fh)["stdout"]  # past the stop point: it "served"


@pytest.mark.parametrize("live", [False, True])
def test_dry_run_stops_before_serving(tmp_path, live):
    saved = str(tmp_path / "run.json")
    argv = ["run", "--watch", "serve_config:ServeConfig", "--stop-at", "serve_config:start", "--save-trace", saved,
            "--format", "json", "--", PY, "tests/examples/serve_config.py"]
    r = run_cli(argv[:1] + (["--live"] if live else []) + argv[1:])
    assert r.rc == 0, r
    with open(saved) as fh:
        assert ("serving with" in json.load(fh)["stdout"]) is live


def test_secrets_never_leave_the_processes(tmp_path):
    script = tmp_path / "secrets.sh"
    script.write_text('cd %s\nexport HF_TOKEN=hf_supersecret_1\nSGLANG_API_KEY="sk-local-secret-2"\n'
                      '"%s" tests/examples/serve_config.py --api-key sk-argv-secret-3 --model tiny\n'
                      'echo "$HF_TOKEN"\n' % (ROOT, PY))
    saved = str(tmp_path / "run.json")
    r = run_cli(["run", "--watch", "serve_config:ServeConfig", "--stop-at", "serve_config:start", "--save-trace",
                 saved, "--show-output", "--", "bash", str(script)])
    j = run_cli(["run", "--from", saved, "--format", "json"])
    assert r.rc == 0 and j.rc == 0, r
    with open(saved) as fh:
        everything = fh.read() + r.out + r.err + j.out
    for secret in ("hf_supersecret_1", "sk-local-secret-2", "sk-argv-secret-3"):
        assert secret not in everything
    [p] = [p for p in j.doc["processes"] if p["kind"] == "python"]
    assert p["argv"][2:4] == ["--api-key", "<redacted>"] and p["env"]["HF_TOKEN"] == "<redacted>"
