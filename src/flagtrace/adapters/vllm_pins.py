"""Write env/vllm/<VERSION>.txt, the overlay pin file of one vLLM release.

    python -m flagtrace.adapters.vllm_pins VERSION [VERSION...] [-o DIR]

The overlay sits on the shared venv of the SGLang environments (.envs/sglang/venv: torch 2.14.1,
torchvision 0.29.1 and env/sglang/base.txt), so it holds what vLLM needs beyond that venv. Starting
from the release's wheel METADATA (Requires-Dist, markers evaluated for Linux x86_64 / CPython 3.11),
and then through the METADATA of every package it pins (its whole closure, extras included, e.g.
fastapi[standard]), each requirement is:
  * left out when EXCLUDE names it (torch and what is built against it, GPU-only packages, ...);
  * left to the venv when base.txt's version satisfies it (unless BASE_REFUSED says it does not work);
  * else pinned, exactly: at the requirement's own pin (==; a package's exact pins are taken first),
    else at TRANSFORMERS' version for the release, else at the newest version in CHOICES that every
    requirement seen so far accepts and that accepts every version settled so far.
A METADATA pin that has no wheel on PyPI is noted and not installed (flashinfer-python 0.7.3).
Wheels are cached in .envs/vllm/wheels/ (VLLM_ENVS_DIR overrides .envs/vllm): flagtrace's release builder (envs/build.py)
installs from that folder, and the same inputs always give the same file.
Standard library only; needs pip for the downloads (and its vendored packaging for markers).
"""
import os
import re
import sys

from ..core import pinlib
from ..core.pinlib import exact, satisfies, vkey

try:
    from packaging.markers import Marker
except ImportError:  # pip always has it
    from pip._vendor.packaging.markers import Marker

# The wheel cache (envs/build.py sets it to <envs root>/vllm/wheels before generating a pin file).
WHEELS = os.path.join(os.path.expanduser("~"), ".cache", "flagtrace", "envs", "vllm", "wheels")
# The shared venv's interpreter and platform, so that markers do not depend on who runs this script.
ENV = {"python_version": "3.11", "python_full_version": "3.11.7", "implementation_name": "cpython",
       "platform_python_implementation": "CPython", "platform_machine": "x86_64", "platform_system": "Linux",
       "sys_platform": "linux", "os_name": "posix"}

_TORCHBUILT = "built against one torch release and/or CUDA; not imported on the config-resolution path"
_GPU = "GPU-only (CUDA kernels, compilers or drivers); flagtrace stands in for compiled modules at run time"
# Never installed, with why. Their own requirements are not followed either.
EXCLUDE = {
    "torch": "the venv's torch 2.14.1 (the only torch on this machine) stands in for vLLM's pin",
    "torchvision": "the venv's torchvision 0.29.1 stands in for vLLM's pin",
    "torchaudio": _TORCHBUILT, "torchcodec": _TORCHBUILT, "xformers": _TORCHBUILT,
    "ray": "distributed runtime (~200 MB; its [cgraph] extra pulls CUDA cupy); vLLM imports it lazily "
           "(executor/ray_utils.py, try/except) and needs it only for multi-node executors",
    **{name: _GPU for name in (
        "flashinfer-cubin", "flashinfer-jit-cache", "tilelang", "quack-kernels", "tokenspeed-mla",
        "humming-kernels", "nvidia-cutlass-dsl", "nvidia-cudnn-frontend", "nvtx", "pynvvideocodec",
        "fastsafetensors", "instanttensor", "cuda-python", "cuda-core", "cuda-tile", "nccl4py",
        "nccl-extensions", "nvidia-cuda-nvcc", "nvidia-cuda-tileiras", "nvidia-nvvm", "nvidia-cuda-crt",
        "cupy-cuda12x", "cupy-cuda13x", "deep-gemm", "petit-kernel")},
}
# A requirement base.txt satisfies on paper but not in fact: the venv's version is refused for the release
# (and the name pinned as if base.txt lacked it), with why.
BASE_REFUSED = {
    "0.25.1": {"openai": "vllm requires openai>=2.0.0, but base.txt's openai 2.6.1 lacks "
                         "openai.types.responses.NamespaceTool, which vllm/tool_parsers/utils.py:13 imports "
                         "(via vllm.entrypoints.cli.serve)"},
}
# transformers: vLLM does not pin it exactly. Taken here: the newest release on PyPI on the day the vLLM
# release was uploaded that its METADATA range accepts (a later transformers can break an older vLLM).
TRANSFORMERS = {
    "0.11.2": ("4.57.1", "2025-11-20", "<5,>=4.56.0"),
    "0.15.1": ("4.57.6", "2026-02-05", "<5,>=4.56.0"),
    "0.25.1": ("5.13.1", "2026-07-14", ">=5.5.3"),
    "0.33.0": ("5.20.2", "2026-11-02", "<5.21.0,>=5.16.1"),
    "0.34.0": ("5.22.2", "2026-11-16", "<5.23.0,>=5.16.1"),
}
# Versions for distributions that no requirement pins exactly: newest first, the first that every
# requirement seen accepts wins. Each was the version `pip install vllm==V` picked on 2026-12-03.
CHOICES = {
    "agent-detector": ["2.0.0"], "anthropic": ["2.16.0", "0.71.0"], "apache-tvm-ffi": ["0.1.15.post2", "0.1.11"],
    "astor": ["0.8.1"], "blake3": ["1.0.11"], "cachetools": ["8.0.2"], "cbor2": ["6.3.0"], "cffi": ["2.1.1"],
    "cloudpickle": ["3.1.3"], "cryptography": ["50.0.2"], "depyf": ["0.20.0"], "detect-installer": ["0.2.1"],
    "diskcache": ["5.6.3"], "dnspython": ["2.9.2"], "docstring-parser": ["0.18.0"], "email-validator": ["2.4.0"],
    "fastapi": ["0.136.3"], "fastapi-cli": ["0.0.34"], "fastapi-cloud-cli": ["0.28.0"], "fastar": ["0.12.0"],
    "googleapis-common-protos": ["1.76.0"], "grpcio": ["1.85.3"], "grpcio-reflection": ["1.85.1"],
    "httpcore2": ["2.16.2"], "httptools": ["0.9.0"], "httpx2": ["2.16.2"],
    "huggingface-hub": ["2.4.0", "0.36.2"], "ijson": ["3.6.0"], "interegular": ["0.3.3"], "jmespath": ["1.1.0"],
    "jsonschema": ["4.26.0"], "jsonschema-specifications": ["2025.9.1"], "lark": ["1.2.2"],
    "llguidance": ["1.7.6", "1.3.0"], "llvmlite": ["0.47.0", "0.44.0"], "lm-format-enforcer": ["0.11.3"], "mcp": ["2.3.0"], "mcp-types": ["2.3.0"],
    "mistral-common": ["1.13.1"], "model-hosting-container-standards": ["0.1.16"], "msgspec": ["0.23.0"],
    "ninja": ["1.13.2"], "numpy": ["2.3.5", "2.2.6"], "openai": ["3.57.0"], "openai-harmony": ["0.0.8"],
    "opencv-python-headless": ["5.1.0.95"], "opentelemetry-exporter-http-transport": ["0.66b2"],
    "opentelemetry-exporter-otlp": ["1.45.2"], "opentelemetry-exporter-otlp-common": ["0.66b2"],
    "opentelemetry-exporter-otlp-proto-common": ["1.45.2"], "opentelemetry-exporter-otlp-proto-grpc": ["1.45.2"],
    "opentelemetry-exporter-otlp-proto-http": ["1.45.2"], "opentelemetry-proto": ["1.45.2"],
    "opentelemetry-sdk": ["1.45.2"], "opentelemetry-semantic-conventions": ["0.66b2"],
    "opentelemetry-semantic-conventions-ai": ["0.5.1"], "oss-harmony": ["0.0.11"],
    "outlines-core": ["0.2.14", "0.2.11"], "prometheus-client": ["0.26.0"],
    "prometheus-fastapi-instrumentator": ["8.1.0"], "protobuf": ["7.36.2"], "py-cpuinfo": ["9.0.0"],
    "pycountry": ["26.2.16"], "pycparser": ["3.12"], "pydantic-extra-types": ["2.11.1"],
    "pydantic-settings": ["2.16.3"], "pyjwt": ["2.15.1"], "python-dotenv": ["1.2.4"],
    "python-json-logger": ["4.2.0"], "python-multipart": ["0.0.34"], "referencing": ["0.37.0"],
    "rich-toolkit": ["0.20.6"], "rignore": ["0.8.1"], "rpds-py": ["2026.9.1"], "scipy": ["1.17.1"],
    "sentry-sdk": ["2.75.0"], "setproctitle": ["1.3.8"], "sse-starlette": ["3.7.1"], "supervisor": ["4.3.0"],
    "tabulate": ["0.10.0"], "tiktoken": ["0.14.0"], "tokenizers": ["0.23.3", "0.22.2"], "truststore": ["0.10.5"],
    "uvicorn": ["0.55.0"], "uvloop": ["0.23.0"], "watchfiles": ["1.3.0"], "websockets": ["17.4"],
    "xgrammar": ["0.2.8", "0.2.3", "0.1.29", "0.1.25"],
}


def wheel(name, version):
    return pinlib.wheel(WHEELS, name, version)


def applies(marker, extras):
    """Whether a requirement's marker holds on the venv's platform for a package installed with ``extras``."""
    return not marker or any(Marker(marker).evaluate(dict(ENV, extra=e)) for e in (extras or ("",)))


def pin_file(ver):
    """The text of env/vllm/<ver>.txt. Raises pinlib.PinError: NoWheel (PyPI has no wheel of the release),
    PipFailed, Unresolved (TRANSFORMERS or CHOICES needs an entry, or two pins conflict)."""
    if not wheel("vllm", ver):
        raise pinlib.NoWheel("no vllm %s wheel on PyPI" % ver)
    base = pinlib.base_versions()
    pins = {"vllm": (ver, None)}  # name -> (version or None when not installable, comment); file order
    specs = {}  # name -> [(specifier, who)], every requirement on it seen
    excluded = {}  # name -> [(specifier, who)]
    todo, done = [("vllm", ver, ())], set()

    def choose(name, who, spec):
        """A version for ``name`` that every requirement seen accepts, and why."""
        seen = [s for s, _ in specs[name]]
        if exact(spec):
            return exact(spec), "%s pins it" % who
        if name == "transformers":
            if ver not in TRANSFORMERS:
                raise pinlib.Unresolved("vllm %s: name its transformers release in TRANSFORMERS (%s requires "
                                        "transformers%s)" % (ver, who, spec))
            v, day, _ = TRANSFORMERS[ver]
            if all(satisfies(v, s) for s in seen):
                return v, ("%s requires transformers%s: the newest release on PyPI on %s, the day vllm %s was "
                           "uploaded (TRANSFORMERS)" % (who, spec, day, ver))
        for v in CHOICES.get(name, []):
            if all(satisfies(v, s) for s in seen) and fits_pins(name, v):
                return v, "%s requires %s%s: newest that fits (CHOICES)" % (who, name, spec or " (any version)")
        raise pinlib.Unresolved("vllm %s: no version of %s accepts %s (add one to CHOICES)"
                                % (ver, name, ", ".join("%s from %s" % (s or "any", w) for s, w in specs[name])))

    def fixed(name):
        """The version of name settled so far: pinned here, or base.txt's when a requirement pins it exactly."""
        if name in pins:
            return pins[name][0]
        if name in base and any(exact(s) for s, _ in specs.get(name, [])):
            return base[name]

    def fits_pins(name, v):
        """Whether name==v accepts every version settled so far (xgrammar 0.2.8 refuses vllm 0.25.1's
        apache-tvm-ffi==0.1.9, so 0.25.1 gets xgrammar 0.2.3)."""
        w = wheel(name, v)
        return w and all(not fixed(n) or satisfies(fixed(n), s)
                         for n, s, _, m in pinlib.requirements(w) if applies(m, ()))

    while todo:
        pkg, pv, extras = todo.pop(0)
        if (pkg, pv, extras) in done:
            continue
        done.add((pkg, pv, extras))
        # Exact pins first, so that choosing among CHOICES can see them.
        for name, spec, rextras, marker in sorted(pinlib.requirements(wheel(pkg, pv)), key=lambda r: not exact(r[1])):
            if name == pkg or not applies(marker, extras):
                continue
            if name in EXCLUDE:
                excluded.setdefault(name, []).append((spec, pkg))
                continue
            specs.setdefault(name, []).append((spec, pkg))
            if name in pins:
                have = pins[name][0]
                if have is None:
                    continue  # no wheel on PyPI (noted)
                if not satisfies(have, spec):
                    raise pinlib.Unresolved("vllm %s: %s requires %s%s but %s==%s is pinned (%s)"
                                            % (ver, pkg, name, spec, name, have, pins[name][1]))
            elif (name in base and all(satisfies(base[name], s) for s, _ in specs[name])
                  and name not in BASE_REFUSED.get(ver, {})):
                have = base[name]
            else:
                have, why = choose(name, pkg, spec)
                if name in BASE_REFUSED.get(ver, {}):
                    why += "; base.txt's %s is refused (BASE_REFUSED): %s" % (base[name], BASE_REFUSED[ver][name])
                elif name in base:
                    why += "; base.txt's %s is refused" % base[name]
                if not wheel(name, have):
                    pins[name] = (None, "%s==%s (%s) is NOT installed: PyPI has no wheel of it." % (name, have, why))
                    continue
                pins[name] = (have, why + ".")
                todo.append((name, have, ()))
            if rextras:
                todo.append((name, have, rextras))

    lines = ["# Overlay for vllm %s (.envs/vllm/overlays/%s, first on PYTHONPATH before the shared venv"
             % (ver, ver),
             "# .envs/sglang/venv: torch 2.14.1, torchvision 0.29.1 and env/sglang/base.txt).",
             "# Generated by flagtrace.adapters.vllm_pins from vllm %s's METADATA (Requires-Dist), that of each package"
             % ver,
             "# pinned here (the whole closure) and base.txt: a requirement that base.txt satisfies is not pinned.",
             "# Installed by flagtrace's release builder (envs/build.py) (wheels cached in .envs/vllm/wheels) with:",
             "#   pip install --no-deps --only-binary=:all: --no-index --find-links .envs/vllm/wheels \\",
             "#       --target .envs/vllm/overlays/%s -r env/vllm/%s.txt" % (ver, ver)]
    for name, (v, why) in pins.items():
        lines += ["# " + why] if why else []
        lines += ["%s==%s" % (name, v)] if v else []
    lines.append("# Not installed (EXCLUDE in flagtrace.adapters.vllm_pins):")
    for name in sorted(excluded):
        reqs = ", ".join(sorted({"%s%s" % (w, " " + s if s else "") for s, w in excluded[name]}))
        lines.append("#   %s (required by %s): %s." % (name, reqs, EXCLUDE[name]))
    return "\n".join(lines) + "\n"


def main(argv):
    """The script: a PinError ends it with its reason on stderr and exit status 1."""
    try:
        pinlib.write_pin_files(argv, os.path.join(pinlib.PINS, "vllm"), pin_file, __doc__)
    except pinlib.PinError as exc:
        sys.exit(exc.reason)


if __name__ == "__main__":
    main(sys.argv[1:])
