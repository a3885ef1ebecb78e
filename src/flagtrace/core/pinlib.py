"""Shared by the pin-file generators (adapters/sglang_pins.py, adapters/vllm_pins.py) and the release
builder (envs/build.py): PEP 440 version order and specifiers, a wheel cache, a wheel's METADATA
Requires-Dist, the release list on PyPI, and the shared venv's pins (data/env/sglang/base.txt, the venv
both frameworks' overlays sit on).

Standard library only; needs pip for the downloads. What cannot be done is raised as a PinError (one of its
kinds below); only the generators' command line (write_pin_files' callers, their main()) turns one into a
message and an exit status, and the release builder maps each kind to flagtrace's exit code.
"""
import email.parser
import os
import re
import subprocess
import sys
import zipfile

PINS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "env")
BASE_TXT = os.path.join(PINS, "sglang", "base.txt")  # the shared venv's pins (envs/build.py)
TORCH = {"torch": "2.14.1", "torchvision": "0.29.1"}  # installed with base.txt (envs/build.py)


class PinError(Exception):
    """What a pin generator, or the wheel cache under it, could not do. ``str(exc)`` is the reason, the text the
    scripts print; the subclass says which kind of failure it is."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


class BadVersion(PinError, ValueError):
    """A version string that is not PEP 440 (as far as vkey reads it)."""


class NoWheel(PinError):
    """PyPI has no wheel of a release, or of a package it pins."""


class PipFailed(PinError):
    """pip itself failed (network, index, pip's own error), not for want of a wheel."""


class Unresolved(PinError):
    """The generator cannot settle a pin from the METADATA and its own tables (NEEDS, CHOICES, TRANSFORMERS):
    one of them needs an entry, or two pins conflict."""


class BadArguments(PinError):
    """The generators' command line is wrong; the reason is the usage text."""


def shipped(framework):
    """The releases of ``framework`` flagtrace ships pin files for (data/env/<framework>/<V>.txt), oldest first."""
    folder = os.path.join(PINS, framework)
    names = os.listdir(folder) if framework and os.path.isdir(folder) else []
    return sorted((f[:-4] for f in names if f[:1].isdigit() and f.endswith(".txt")), key=vkey)


def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def vkey(v):
    m = re.fullmatch(r"v?(\d+(?:\.\d+)*)(?:[-_.]?(a|b|rc)(\d*))?(?:[-_.]?post(\d*))?(?:[-_.]?dev(\d*))?(?:\+.*)?",
                     v.strip().lower())
    if not m:
        raise BadVersion("unparsable version %r" % v)
    rel = [int(x) for x in m[1].split(".")]
    while len(rel) > 1 and rel[-1] == 0:
        rel.pop()
    pre = (["a", "b", "rc"].index(m[2]), int(m[3] or 0)) if m[2] else ((-1, 0) if m[5] is not None else (9, 0))
    return (tuple(rel), pre, int(m[4] or 0) if m[4] is not None else -1,
            int(m[5] or 0) if m[5] is not None else float("inf"))


def satisfies(v, spec):
    for c in filter(None, (c.strip() for c in spec.split(","))):
        op, want = re.fullmatch(r"(~=|===|==|!=|<=|>=|<|>)\s*(\S+)", c).groups()
        if want.endswith(".*") or op == "~=":  # prefix match: "==1.2.*", "~=1.2.3" (>=1.2.3, ==1.2.*)
            prefix = want[:-2].split(".") if want.endswith(".*") else want.split(".")[:-1]
            hit = v.split(".")[:len(prefix)] == prefix
            ok = hit and vkey(v) >= vkey(want) if op == "~=" else hit == (op == "==")
        else:
            a, b = vkey(v), vkey(want)
            ok = {"==": a == b, "===": v == want, "!=": a != b, "<=": a <= b, ">=": a >= b,
                  "<": a < b, ">": a > b}[op]
        if not ok:
            return False
    return True


def exact(spec):
    m = re.fullmatch(r"===?([^,]+)", spec or "")
    return m and m[1]


def releases(package, first, last):
    """Every release of ``package`` from ``first`` through ``last`` on PyPI, oldest first."""
    out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", package],
                         capture_output=True, text=True, check=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("Available versions:"))
    found = [v.strip() for v in line.split(":", 1)[1].split(",")]
    return sorted((v for v in found if vkey(first) <= vkey(v) <= vkey(last)), key=vkey)


def cached(cache, name, version):
    """The wheel of name==version in ``cache``, or None."""
    for f in sorted(os.listdir(cache)) if os.path.isdir(cache) else []:
        parts = f.split("-")
        if f.endswith(".whl") and norm(parts[0]) == norm(name) and vkey(parts[1]) == vkey(version):
            return os.path.join(cache, f)


def wheel(cache, name, version):
    """The wheel of name==version in the folder ``cache`` (downloaded once), or None when PyPI has no
    wheel of it."""
    os.makedirs(cache, exist_ok=True)
    if not cached(cache, name, version):
        r = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                            "--disable-pip-version-check", "-d", cache, "%s==%s" % (name, version)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode and "No matching distribution" not in r.stderr:
            raise PipFailed("pip download %s==%s failed:\n%s" % (name, version, r.stderr))
    return cached(cache, name, version)


def top_dirs(cache, name, version):
    """Top-level names in a (large) wheel. The list is cached beside the wheels; the wheel is not kept."""
    path = os.path.join(cache, "%s-%s.tops" % (norm(name), version))
    if not os.path.exists(path):
        whl = wheel(cache, name, version)
        if not whl:
            raise NoWheel("no %s==%s wheel on PyPI" % (name, version))
        with zipfile.ZipFile(whl) as z:
            tops = sorted({n.split("/")[0] for n in z.namelist()})
        with open(path, "w") as fh:
            fh.write("\n".join(tops) + "\n")
        os.remove(whl)
    return open(path).read().split()


def dist_info(whl, name):
    """The text of ``<dist>.dist-info/<name>`` (METADATA, entry_points.txt, ...) in a wheel, or None."""
    with zipfile.ZipFile(whl) as z:
        found = [n for n in z.namelist() if re.fullmatch(r"[^/]+\.dist-info/" + re.escape(name), n)]
        return z.read(found[0]).decode() if found else None


def requirements(whl):
    """A wheel's Requires-Dist, in file order, as (name, specifier, extras, marker) tuples: name
    normalised, specifier without spaces ("" for any version), extras a tuple, marker "" when none."""
    msg = email.parser.Parser().parsestr(dist_info(whl, "METADATA"))
    out = []
    for line in msg.get_all("Requires-Dist") or []:
        m = re.fullmatch(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?\s*\(?([^;()]*)\)?\s*(?:;\s*(.*))?",
                         line)
        extras = tuple(sorted(norm(e) for e in (m[2] or "").split(",") if e.strip()))
        out.append((norm(m[1]), m[3].replace(" ", ""), extras, (m[4] or "").strip()))
    return out


def base_versions():
    """{name: version} of the shared venv: the torch pins and env/sglang/base.txt."""
    out = {norm(k): v for k, v in TORCH.items()}
    for line in open(BASE_TXT):
        m = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", line)
        if m:
            out[norm(m[1])] = m[2]
    return out


def fetch(cache, pinfile):
    """Download into ``cache``, in one pip call, the wheel of every name==version line of ``pinfile`` that
    it lacks."""
    pins = [m.groups() for m in map(re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)").match, open(pinfile)) if m]
    missing = ["%s==%s" % p for p in pins if not cached(cache, *p)]
    print("%d pins, %d wheels missing from %s" % (len(pins), len(missing), cache), flush=True)
    if missing:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                        "--disable-pip-version-check", "-d", cache] + missing, check=True)
    for p in pins:
        if not cached(cache, *p):
            raise NoWheel("%s: no wheel of %s==%s" % (pinfile, *p))


def write_pin_files(argv, out, pin_file, usage):
    """The pin generators' command line: ``VERSION... [-o DIR]``; each file written only where it changed.
    Raises PinError (BadArguments, with ``usage`` as its reason, for a wrong command line): the generators'
    main() turn it into the message and exit status."""
    if "-o" in argv:
        i = argv.index("-o")
        out = argv[i + 1]
        del argv[i:i + 2]
    if not argv or any(a.startswith("-") for a in argv):
        raise BadArguments(usage)
    os.makedirs(out, exist_ok=True)
    for ver in sorted(argv, key=vkey):
        path = os.path.join(out, ver + ".txt")
        text = pin_file(ver)
        old = open(path).read() if os.path.exists(path) else None
        if text != old:
            with open(path, "w") as fh:
                fh.write(text)
        print("%s: %s" % (path, "unchanged" if text == old else "written"))


def fetch_main(argv):
    """``fetch`` as a script, as the release builder runs it (``python -c`` in the shared venv): a PinError
    ends it as ``sys.exit(reason)`` (the reason on stderr, exit status 1)."""
    try:
        fetch(*argv)
    except PinError as exc:
        sys.exit(exc.reason)
