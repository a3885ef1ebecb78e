"""The options verbs share, each defined here once (pip-tools' ``scripts/options.py``): a verb's
``add_arguments`` picks the groups it takes."""
import argparse

from ..launch.via import DEFAULT_PYTHON

DEFAULT_TIMEOUT = 300.0


def common(p, verb):
    """explain, why, check and run: one command traced, reported."""
    from .. import report as reporters

    p.add_argument("--from", dest="from_trace", metavar="TRACE.json",
                   help="analyse a saved trace instead of running a command")
    p.add_argument("--save-trace", metavar="FILE", help="also write the raw trace to FILE")
    watch_options(p)
    timeout_option(p, "kill the target and its children after this long")
    p.add_argument("--format", choices=reporters.formats(verb), default="terminal")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument("--show-output", action="store_true", help="print the target's own stdout/stderr too")
    p.add_argument("--width", type=int, default=None, help="terminal report width (default: the terminal's)")
    p.add_argument("--no-color", action="store_true")
    p.add_argument("--details", action="store_true",
                   help="show conditions and causes for decided fields too (overridden ones always)")
    p.add_argument("--strict", action="store_true", help="exit 1 when an explicit request was overridden")
    adapter_option(p)
    p.add_argument("--gpu", metavar="NAME[xCOUNT]",
                   help="simulate this hardware, e.g. B200x7 (see flagtrace gpus); default: the real one")
    p.add_argument("--gpu-profile", metavar="FILE.toml", help="a GPU profile of your own (same shape as "
                   "flagtrace gpus --toml prints)")
    p.add_argument("--via", metavar="PREFIX",
                   help="run the target on another host through this command prefix, e.g. "
                        "'ssh -p 19248 root@gpu-box', 'docker exec -i ctr', 'kubectl exec -i pod --'")
    python_option(p, "remote")
    model_options(p)
    release_option(p)
    if verb != "run":
        file_options(p)


def whatif(p, unit, verb):
    """The options diff, matrix and fix share (``unit``: what one resolution is called)."""
    from ..report import formats

    watch_options(p)
    adapter_option(p)
    timeout_option(p, "per %s: kill its resolution after this long" % unit)
    p.add_argument("--format", choices=formats(verb), default="terminal")
    model_options(p)
    release_option(p)
    file_options(p)
    p.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")


def adapter_option(p):
    """``--adapter NAME``: one of the adapters' names (the registry, core.frameworks.ADAPTERS)."""
    from ..adapters import adapter_classes
    from ..core.frameworks import NAMES

    p.add_argument("--adapter", default="auto", choices=NAMES, metavar="NAME",
                   help="auto (default) recognises the command's framework; %s" % "; ".join(
                       "%s: %s" % (a.name, a.summary) for a in adapter_classes()))


def timeout_option(p, what=None):
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help="%s (default %%(default)s)" % what if what else None)


# --python PATH, by what the interpreter stands for in the verb
_PYTHON = {
    "remote": dict(help="with --via: the remote interpreter (default: the command's own python word, or %s for a "
                        "console script)" % DEFAULT_PYTHON),
    "sides": dict(action="append", default=[], help="a side per interpreter (a release or an environment; repeat): "
                  "the command run by each; options renamed between releases are translated"),
    "rows": dict(action="append", default=[], help="a row group per interpreter (a release or an environment; "
                 "repeat); options renamed between releases are translated"),
    "image": dict(help="an interpreter that stands for every image's"),
}


def python_option(p, meaning):
    """``--python PATH``: ``remote`` (with --via, the interpreter there), ``sides`` (diff: a side per
    interpreter), ``rows`` (matrix: a row group per interpreter), ``image`` (lock: every image's)."""
    p.add_argument("--python", metavar="PATH", **_PYTHON[meaning])


def watch_options(p):
    p.add_argument("--watch", action="append", default=[], metavar="MODULE:CLASS",
                   help="config class to watch (repeatable); adapters know their framework's")
    p.add_argument("--stop-at", action="append", default=[], metavar="MODULE:FUNCTION",
                   help="stop the target when it calls this (resolution is over); repeatable")


def model_options(parser):
    parser.add_argument("--model-config", metavar="[NAME=]ID|DIR", action="append",
                        help="the config.json that stands for the command's model: a bundled model id or a folder "
                             "holding config.json (default: the local Hugging Face cache, then the bundled catalog, "
                             "by id or by the path's last component); NAME=ID|DIR for the model the command names "
                             "NAME (a draft model); repeatable")
    parser.add_argument("--offline", action="store_true",
                        help="never ask the Hugging Face hub, as HF_HUB_OFFLINE=1 (default: where nothing here has "
                             "the model, fetch its config.json only, into the Hugging Face cache; HF_ENDPOINT, "
                             "HF_TOKEN honoured)")
    parser.add_argument("--online", action="store_true", help=argparse.SUPPRESS)  # the default now; old lines work


def release_option(p):
    """``--release NAME==VERSION`` (every verb that runs a command; repeatable where sides are compared)."""
    p.add_argument("--release", action="append", default=[], metavar="NAME==VERSION",
                   help="run the command in that framework release (e.g. sglang==0.5.11, vllm==0.33.0), which "
                        "flagtrace builds once and caches (flagtrace env list); diff and matrix: a side per release")


def file_options(p):
    p.add_argument("-f", "--file", action="extend", nargs="+", default=[], metavar="FILE|DIR|-",
                   help="read the launch command from a Kubernetes manifest (helm template output too), a docker "
                        "compose file or a docker run line; - reads stdin; check: several files or folders")
    p.add_argument("--container", metavar="NAME", help="with -f: the container (or service) whose command to run, "
                   "when the file has several")


def shard_option(p):
    """``--shard K/N`` (check -f, lock -f): this runner's share of the rows."""
    def shard(text):
        k, sep, n = text.partition("/")
        if not (sep and k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
            raise argparse.ArgumentTypeError("--shard takes K/N with 1 <= K <= N (1/4: the first of four), not %r"
                                             % text)
        return int(k), int(n)
    p.add_argument("--shard", type=shard, metavar="K/N", help="with -f: only the K-th of N shards of the commands "
                   "(every command in exactly one; lock --merge joins the shards' lock files)")


def join_values(head):
    """``--set --flag`` (``--unset``, ``--flags``) as ``--set=--flag``: argparse would read the
    option value as an option of its own."""
    out, i = [], 0
    while i < len(head):
        if head[i] in ("--set", "--unset", "--flags") and i + 1 < len(head):
            out.append("%s=%s" % (head[i], head[i + 1]))
            i += 2
            continue
        out.append(head[i])
        i += 1
    return out
