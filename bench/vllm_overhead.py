"""Overhead of `flagtrace explain` on `vllm serve` against the bare method.

The bare method is what an engineer does by hand: a plain `python -c` that builds the engine
arguments from the same argv with vLLM's own serve parser and calls `create_engine_config()`,
under the same hardware simulation (the probe with recording switched off). Both include
interpreter start-up and vLLM's import, and both end when the config is built. Runs are
interleaved and the medians compared in this one run (absolute times on this machine are
noise; the ratio is the result). CPU time (user + sys of every process either side starts) is
printed too: on a shared VM it moves less than wall time.

    .venv/bin/python bench/vllm_overhead.py [--version V (any built release)] [--runs 3] [--gpu H100]
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from flagtrace.core import gpus  # noqa: E402
from flagtrace.launch.command import Target  # noqa: E402
from flagtrace.launch.local import run_probe  # noqa: E402

ARGS = [os.path.join(ROOT, "models", "llama-3.1-8b"), "--max-model-len", "32768", "--enable-prefix-caching"]
# vLLM's own serve path up to the config, without its server: the modules `vllm serve` imports, the
# parser it uses, then the engine arguments and their config. The parser's module moved across releases.
BARE = r"""
import os, sys
import vllm.entrypoints.cli.main  # what `vllm serve` loads before it resolves (+500 modules:
import vllm.entrypoints.openai.api_server  # the server, opentelemetry, grpc, xgrammar), not overhead
from vllm.engine.arg_utils import AsyncEngineArgs
try:
    from vllm.entrypoints.common.cli_args import make_arg_parser  # 0.3x
except ImportError:
    from vllm.entrypoints.openai.cli_args import make_arg_parser
try:
    from vllm.utils.argparse_utils import FlexibleArgumentParser
except ImportError:
    from vllm.utils import FlexibleArgumentParser
from vllm.usage.usage_lib import UsageContext
args = make_arg_parser(FlexibleArgumentParser()).parse_args(["--model"] + sys.argv[1:])
config = AsyncEngineArgs.from_cli_args(args).create_engine_config(usage_context=UsageContext.OPENAI_API_SERVER)
print(config.scheduler_config.max_num_seqs, flush=True)
os._exit(0)
"""


def _cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # every waited-for descendant
    return usage.ru_utime + usage.ru_stime


def bare(python, profile, args):
    target = Target(command=[python, "-c", "..."], interpreter=python, python_options=[], mode="code",
                    target=BARE, args=list(args))
    started, cpu = time.perf_counter(), _cpu()
    result = run_probe(target, {"observe": False, "gpu": profile, "setup": ["sim.gpu", "adapters.vllm_sim"]},
                       timeout=600)
    seconds, cpu = time.perf_counter() - started, _cpu() - cpu
    assert result.trace["outcome"].get("exit_code") == 0 and result.stdout.strip(), result.stderr[-3000:]
    return seconds, cpu


def traced(python, gpu, args):
    argv = [sys.executable, "-m", "flagtrace", "explain", "--gpu", gpu, "--format", "json",
            "-o", os.devnull, "--", python, "-m", "vllm.entrypoints.cli.main", "serve", *args]
    started, cpu = time.perf_counter(), _cpu()
    proc = subprocess.run(argv, capture_output=True, cwd=ROOT)
    seconds, cpu = time.perf_counter() - started, _cpu() - cpu
    assert proc.returncode == 0, proc.stderr[-2000:]
    return seconds, cpu


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--version", default=os.environ.get("FLAGTRACE_VLLM", "0.33.0"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--gpu", default="H100")
    opts = parser.parse_args()
    python = os.path.join(ROOT, ".envs", "vllm", opts.version, "bin", "python")
    profile = gpus.choose(opts.gpu)
    bare(python, profile, ARGS)  # warm the page cache and vLLM's model-inspection cache for both
    b, t = [], []
    for i in range(opts.runs):
        b.append(bare(python, profile, ARGS))
        t.append(traced(python, opts.gpu, ARGS))
        print("run %d: bare %.2fs (cpu %.2fs)  flagtrace %.2fs (cpu %.2fs)" % (i + 1, *b[-1], *t[-1]), flush=True)
    mb, mt = statistics.median(w for w, _ in b), statistics.median(w for w, _ in t)
    cb, ct = statistics.median(c for _, c in b), statistics.median(c for _, c in t)
    print("vllm %s, Llama-3.1-8B on %s, %d runs each, interleaved" % (opts.version, opts.gpu, opts.runs))
    print("median bare method (python -c create_engine_config, same simulation): %.2fs wall, %.2fs cpu" % (mb, cb))
    print("median flagtrace explain:                                           %.2fs wall, %.2fs cpu" % (mt, ct))
    print("ratio flagtrace / bare: %.3f wall, %.3f cpu (user+sys of every process)" % (mt / mb, ct / cb))

if __name__ == "__main__":
    main()
