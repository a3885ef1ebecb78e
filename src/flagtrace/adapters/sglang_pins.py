"""Write env/sglang/<VERSION>.txt, the overlay pin file of one SGLang release.

    python -m flagtrace.adapters.sglang_pins VERSION [VERSION...] [-o DIR]

Reads the release's wheel METADATA (Requires-Dist; the core list plus the "srt"/"runtime-common"
extras that older releases used) and env/sglang/base.txt, and pins, always exactly:
  * sglang==VERSION and its transformers pin;
  * flashinfer-python and sgl-deep-gemm at the METADATA pin, when PyPI has a wheel of it;
  * what NEEDS below lists for the release: modules that `import sglang.launch_server` and
    `prepare_server_args` import beyond base.txt (measured on this machine), at the METADATA pin,
    else the version NEEDS names, else CHOICES' newest that fits;
  * whatever those packages require that base.txt lacks (NEEDS packages: their whole closure) or has
    at a version they refuse (all packages), e.g. huggingface-hub 0.36.x for every transformers 4.x;
  * "#@extract <sgl-kernel pin> triton_kernels" when that wheel ships triton_kernels/, and
    "#@smoke import-only" for releases whose sglang.srt.server_args cannot import under torch 2.14.
Wheels are cached in .envs/sglang/wheels/ (SGLANG_ENVS_DIR overrides .envs/sglang) and reused, so the
same inputs always give the same file (of the 0.2-0.6 GB sgl-kernel wheels, only the list of their top-level
names is kept). Standard library only; needs pip for the downloads.
"""
import os
import re
import sys

from ..core import pinlib
from ..core.pinlib import base_versions, exact, norm, satisfies, vkey  # noqa: F401  (re-exported)

# The wheel cache (envs/build.py sets it to <envs root>/sglang/wheels before generating a pin file).
WHEELS = os.path.join(os.path.expanduser("~"), ".cache", "flagtrace", "envs", "sglang", "wheels")
EXTRAS = ("srt", "runtime-common", "runtime_common")  # extras a `pip install sglang[srt]` pulled in


def http(where, form, dpc=None):
    """What `import sglang.launch_server` needs for the HTTP server it imports before parsing (<= 0.5.3)."""
    out = [("uvicorn", "launch_server imports the HTTP server, which imports it: " + where),
           ("uvloop", "launch_server imports the HTTP server, which imports it: " + where),
           ("python-multipart", "fastapi refuses the HTTP server's UploadFile route without it (%s)" % form)]
    if dpc:
        out += [("setproctitle", "srt/managers/data_parallel_controller.py:%d imports it (via the HTTP server)" % dpc),
                ("msgspec", "srt/disaggregation/kv_events.py:31 imports it (via the HTTP server)")]
    return out


# Per release: what the parse path imports beyond base.txt, as "name" or "name==version" (a version
# only where METADATA does not pin one), and why; measured with `import sglang.launch_server` and
# `prepare_server_args([...])` (the latter under flagtrace's simulated GPU too).
NEEDS = {
    "0.4.0": [("transformers==4.46.3", "METADATA has no transformers (vllm>=0.6.3.post1 brought it); "
               "the newest release when sglang 0.4.0 came out (2024-12-04), accepted by vllm 0.6.4.post1")]
             + http("srt/server.py:38-39", "srt/server.py:378"),
    "0.4.5": http("srt/entrypoints/http_server.py:39-40", "http_server.py:264")
             + [("setproctitle", "srt/managers/data_parallel_controller.py:23 imports it (via the HTTP server)"),
                ("decord", "srt/utils.py:57 imports it at module level (lazy from 0.4.6)"),
                ("compressed-tensors==0.9.4", "base.txt's 0.20.1 imports transformers.masking_utils "
                 "(compressed_tensors/modeling/attention.py:15), which transformers 4.51.0 lacks; 0.9.4, as for "
                 "0.4.6.post5, does not")],
    "0.4.6.post5": http("srt/entrypoints/http_server.py:39-40", "http_server.py:277", 24)
                   + [("compressed-tensors==0.9.4", "base.txt's 0.20.1 imports transformers.masking_utils "
                       "(compressed_tensors/modeling/attention.py:15), which transformers 4.51.1 lacks; "
                       "0.9.4 is the last release before sglang 0.4.6.post5")],
    "0.4.10.post2": http("srt/entrypoints/http_server.py:39-40", "http_server.py:383", 28),
    "0.5.1": http("srt/entrypoints/http_server.py:40-41", "http_server.py:425", 28),
    "0.5.3": http("srt/entrypoints/http_server.py:43-44", "http_server.py:543", 27)
             + [("jsonschema", "srt/entrypoints/openai/serving_chat.py:12 imports it (via the HTTP server)")],
    "0.5.5": [],  # launch_server no longer imports the HTTP server before parsing
    "0.5.15": [("msgspec", "hard import: server_args.py:51 -> sglang/srt/lora/lora_registry.py:21")],
    "0.5.19": [("msgspec", "hard import: sglang/kernels/fused_op.py:83 (via server_args)"),
               ("xgrammar", "hard import: srt/entrypoints/openai/protocol.py:66 (via server_args)")],
    "0.5.23": [("msgspec", "hard import: ServerArgs is a msgspec Struct (sglang/srt/server_args.py:29)")],
}
# Releases whose `import sglang.srt.server_args` fails under torch 2.14 / triton 3.8 for a reason of the
# release itself; flagtrace's probe deals with it at run time, so the smoke test only imports sglang.
IMPORT_ONLY = {
    "0.4.0": "sglang/srt/utils.py:53: ImportError: cannot import name 'default_cache_dir' from "
             "'triton.runtime.cache'",
    "0.4.6.post5": "sglang/srt/utils.py:80: ImportError: cannot import name 'default_cache_dir' from "
                   "'triton.runtime.cache'",
    "0.4.10.post2": None,  # from here on sglang.srt.server_args imports
}
# Packages a release imports on the parse path that no overlay can hold (comment lines for its pin file).
ABSENT = {"0.4.0": [
    "vllm (METADATA: vllm>=0.6.3.post1) is NOT installed. sglang 0.4.0 imports it unconditionally",
    "(srt/layers/quantization/__init__.py:6, reached from launch_server.py:6), so `import sglang.launch_server`",
    "fails with \"No module named 'vllm'\". vllm 0.6.x pins torch==2.5.1 and numpy<2, ships vllm._C (CUDA) and",
    "needs outlines<0.1 (numba, numpy<2); it does not fit the shared torch 2.14 / numpy 2.4 venv.",
    "prepare_server_args itself does not need it (0.4.0 resolves only in ServerArgs.__post_init__)."]}
# Versions for distributions METADATA does not pin: newest first, the first that every specifier
# accepts wins. Each was the newest release on PyPI when these files were made and imports here.
CHOICES = {
    "decord": ["0.6.0"],
    "huggingface-hub": ["0.36.2"],  # the last 0.x: every transformers 4.x requires huggingface-hub<1.0
    "tokenizers": ["0.23.2", "0.22.2", "0.21.4", "0.20.3"],  # the last of each minor series
    "uvicorn": ["0.55.0"], "uvloop": ["0.23.0"], "setproctitle": ["1.3.8"], "python-multipart": ["0.0.34"],
    "msgspec": ["0.23.0"], "jsonschema": ["4.26.0"], "jsonschema-specifications": ["2025.9.1"],
    "referencing": ["0.37.0"], "rpds-py": ["2026.9.1"], "apache-tvm-ffi": ["0.1.11", "0.1.9"],
}
KERNELS = ("sglang-kernel", "sgl-kernel")


def releases(first, last):
    """Every sglang release from ``first`` through ``last`` on PyPI, oldest first."""
    return pinlib.releases("sglang", first, last)


def wheel(name, version):
    """The cached wheel of name==version (downloaded once), or None when PyPI has no wheel of it."""
    return pinlib.wheel(WHEELS, name, version)


def top_dirs(name, version):
    """Top-level names in a (large) wheel; only the list is kept (in WHEELS)."""
    return pinlib.top_dirs(WHEELS, name, version)


def requires(whl):
    """{name: specifier} of a wheel's unconditional Requires-Dist (plus EXTRAS'), in file order."""
    out = {}
    for name, spec, _, marker in pinlib.requirements(whl):
        if marker and not re.fullmatch(r"""extra\s*==\s*["'](%s)["']""" % "|".join(EXTRAS), marker):
            continue  # other extras; platform and python_version markers (none of them matters here)
        out.setdefault(name, spec)
    return out


def measured(table, ver, default=None):
    """The table's entry for the release, else that of the newest measured release before it (0.4.7
    needs what 0.4.6.post5 needs); an entry that is empty or None ends what earlier ones said."""
    older = [k for k in table if vkey(k) <= vkey(ver)]
    return table[max(older, key=vkey)] if older else default


def pin_file(ver):
    """The text of env/sglang/<ver>.txt. Raises pinlib.PinError: NoWheel (PyPI has no wheel of the release or
    of its kernel), PipFailed, Unresolved (NEEDS or CHOICES needs an entry, or two pins conflict)."""
    whl = wheel("sglang", ver)
    if not whl:
        raise pinlib.NoWheel("no sglang %s wheel on PyPI" % ver)
    meta, base = requires(whl), base_versions()
    pins = {}  # name -> (version, comment); insertion order is the file's order
    closure = set()  # packages whose missing requirements are pinned too

    def choose(name, specs, why):
        """Pin name at sglang's METADATA pin if every specifier accepts it, else at a CHOICES version."""
        for v in [exact(meta.get(name))] + CHOICES.get(name, []):
            if v and all(satisfies(v, s) for s in specs):
                src = ("METADATA pin" if v == exact(meta.get(name))
                       else "unpinned in METADATA: newest release that fits (CHOICES)")
                pins[name] = (v, "%s; %s." % (why, src))
                return
        raise pinlib.Unresolved("sglang %s: no version of %s accepts %s (add one to CHOICES)" % (ver, name, specs))

    lines = ["# Overlay for sglang %s (.envs/sglang/overlays/%s, first on PYTHONPATH before the shared venv)."
             % (ver, ver),
             "# Generated by flagtrace.adapters.sglang_pins from sglang %s's METADATA (Requires-Dist) and base.txt." % ver,
             "# Installed by flagtrace's release builder (envs/build.py) with:",
             "#   pip install --no-deps --only-binary=:all: --target .envs/sglang/overlays/%s -r env/sglang/%s.txt"
             % (ver, ver)]
    pins["sglang"] = (ver, None)
    needs = {norm(n.split("==")[0]): (n.split("==")[1] if "==" in n else None, why)
             for n, why in measured(NEEDS, ver, [])}
    if exact(meta.get("transformers")):
        pins["transformers"] = (exact(meta["transformers"]), "METADATA pin.")
    elif "transformers" in needs:
        pins["transformers"] = (needs["transformers"][0], needs["transformers"][1] + ".")
    else:
        raise pinlib.Unresolved("sglang %s: METADATA has no transformers pin; name one in NEEDS" % ver)
    for name, why in (("flashinfer-python", "sglang's sampling/attention defaults depend on whether flashinfer "
                       "imports (utils is_flashinfer_available); it imports on CPU"),
                      ("sgl-deep-gemm", "deep_gemm, a separate package since 0.5.12; it imports on CPU "
                       "(ENABLE_JIT_DEEPGEMM depends on it)")):
        v = exact(meta.get(name))
        if v and wheel(name, v):
            pins[name] = (v, why + "; METADATA pin.")
        elif v:
            pins[name] = (None, "%s==%s (METADATA pin) is not installed: PyPI has no wheel of it (sdist, or the "
                          "flashinfer.ai index), so sglang resolves as if it were absent." % (name, v))
    for name, (v, why) in needs.items():
        if name == "transformers":
            continue
        if v and not exact(meta.get(name)):
            pins[name] = (v, why + ".")
        else:
            choose(name, [meta.get(name, "")], why)
        closure.add(name)
    # Requirements of the pinned packages: refused base.txt versions always, missing ones for NEEDS packages.
    done, skipped = set(), {}
    while set(pins) - done:
        pkg = next(p for p in pins if p not in done)
        done.add(pkg)
        if pkg == "sglang" or pins[pkg][0] is None:
            continue
        for req, spec in requires(wheel(pkg, pins[pkg][0])).items():
            have = pins[req][0] if req in pins else base.get(req)
            if have is None:
                if pkg in closure:
                    choose(req, [spec], "required by %s (%s)" % (pkg, spec or "any version"))
                    closure.add(req)
                else:
                    skipped.setdefault(pkg, []).append(req)
            elif not satisfies(have, spec):
                if req in pins:
                    raise pinlib.Unresolved("sglang %s: %s requires %s%s but %s is pinned"
                                            % (ver, pkg, req, spec, have))
                choose(req, [spec], "%s %s requires %s%s; base.txt has %s" % (pkg, pins[pkg][0], req, spec, have))
                closure.add(req)
    for name, (v, why) in pins.items():
        lines += ["# " + why] if why else []
        lines += ["%s==%s" % (name, v)] if v else []
        if skipped.get(name):
            lines.append("# %s's requirements %s are not installed: not imported on the parse path."
                         % (name, ", ".join(sorted(skipped[name]))))
    kernel = next(((k, exact(meta[k])) for k in KERNELS if exact(meta.get(k))), None)
    try:
        tops = top_dirs(*kernel) if kernel else None
    except pinlib.NoWheel:  # gone from PyPI (sgl-kernel 0.0.8 for sglang 0.4.5): never installed, so no reason to fail
        lines.append("# %s==%s (METADATA pin) is not on PyPI any more; it is not installed either way: flagtrace's "
                     "probe stands in for sgl_kernel." % kernel)
        kernel = None
    if kernel:
        also = " (and the deep_gemm it ships)" if "deep_gemm" in tops else ""
        lines.append("# %s==%s (METADATA pin) is NOT installed: its CUDA ops need libcuda; flagtrace's probe "
                     "stands in for sgl_kernel%s." % (kernel + (also,)))
        if "triton_kernels" in tops:
            lines += ["# triton_kernels ships inside it and imports on CPU; sglang probes it in "
                      "is_triton_kernels_available() (GPT-OSS MoE backend choice).",
                      "# \"#@extract <wheel requirement> <top-level dir>...\" (read by flagtrace's release builder (envs/build.py), ignored "
                      "by pip) unpacks only the named pure-Python packages of that wheel into the overlay.",
                      "#@extract %s==%s triton_kernels" % kernel]
        else:
            lines.append("# That wheel ships no triton_kernels/: nothing to extract.")
    lines += ["# " + line for line in ABSENT.get(ver, [])]
    if measured(IMPORT_ONLY, ver):
        lines += ["# The smoke test of flagtrace's release builder (envs/build.py) imports only sglang (not sglang.srt.server_args, which",
                  "# fails with torch 2.14 / triton 3.8 for a reason of the release itself; flagtrace's probe handles",
                  "# it at run time):",
                  "#   " + measured(IMPORT_ONLY, ver), "#@smoke import-only"]
    return "\n".join(lines) + "\n"


def main(argv):
    """The script: a PinError ends it with its reason on stderr and exit status 1."""
    try:
        pinlib.write_pin_files(argv, os.path.join(pinlib.PINS, "sglang"), pin_file, __doc__)
    except pinlib.PinError as exc:
        sys.exit(exc.reason)


if __name__ == "__main__":
    main(sys.argv[1:])
