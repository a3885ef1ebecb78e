"""Option sweep: every option of a release's own parser, one command each (and random combinations of
them), through flagtrace and through the release's untraced resolution under the same simulation.

For each command it requires: the option's field(s) *honoured* or *overridden* (never default or
decided); every final value equal to the untraced resolution's (tests/frameworks/observer_support.py,
the observer-effect machinery: a fork per command of one import, without flagtrace's recording);
every field the untraced resolution has present in the report; ``requested.option`` equal to what
was typed. Where the release refuses the command, flagtrace must report the same refusal.

The options are read from the release itself (a child run of its interpreter: SGLang's
``ServerArgs.add_cli_args``, vLLM's ``vllm serve`` parser); each gets up to three candidate values
(a choice other than the default, the other twin of a boolean, a number other than the default, a
JSON value for a config option), tried untraced until one resolves; that one is traced. The traced
side is flagtrace's variant engine (one import, a fork per command), analysed as ``explain`` does.

    .venv/bin/python bench/fidelity.py --release sglang==0.5.23 --out /tmp/sglang.json
    .venv/bin/python bench/fidelity.py --release vllm==0.34.0 --combinations 200 --seed 1 --out out.json
    .venv/bin/python bench/fidelity.py --release sglang==0.5.23 --only 'page-size|radix' --limit 10

Prints per release: options total / exercised / refused (no value tried resolves; the refusal
compared) / ignored (its help says it has no effect) / skipped (named, with why) / failing (each
with field, expected, got). docs/fidelity.md has the table per release.
"""
import argparse
import dataclasses
import json
import os
import random
import re
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))
sys.path.insert(0, os.path.join(ROOT, "tests", "frameworks"))  # the observer-effect machinery

from flagtrace.core import gpus
from flagtrace.engine import whatif  # noqa: E402
from flagtrace.core.exitcodes import FlagtraceError  # noqa: E402
from flagtrace.core.asked import Asked  # noqa: E402
from flagtrace.launch.command import Target  # noqa: E402
from flagtrace.launch.local import run_probe  # noqa: E402
from flagtrace.launch.variants import Variant, VariantSession  # noqa: E402
from flagtrace.probe.values import is_secret_name  # noqa: E402

MODELS = os.path.join(ROOT, "models")
BASE_MODEL = {"sglang": "llama-3-8b", "vllm": "llama-3.1-8b"}
VERDICTS_ASKED = ("honoured", "overridden")

# What reads the parser, in the release's interpreter (under the simulation, as resolution runs).
PARSER = r"""
import argparse, json, sys
framework = sys.argv[1]

def parser_of():
    if framework == "sglang":
        from sglang.srt.server_args import ServerArgs
        p = argparse.ArgumentParser(prog="sglang serve")
        ServerArgs.add_cli_args(p)
        return p
    from vllm.entrypoints.cli.serve import ServeSubcommand
    try:
        from vllm.utils.argparse_utils import FlexibleArgumentParser
    except ImportError:
        from vllm.utils import FlexibleArgumentParser
    root = FlexibleArgumentParser(prog="vllm")
    return ServeSubcommand().subparser_init(root.add_subparsers(dest="subparser"))

def name(t):
    if t is None:
        return None
    return getattr(t, "__qualname__", None) or getattr(t, "__name__", None) or type(t).__name__

def inner(t):  # optional_type(int), parse_type(json.loads), parse_dataclass(CompilationConfig)
    for cell in getattr(t, "__closure__", None) or ():
        try:
            v = cell.cell_contents
        except ValueError:
            continue
        if isinstance(v, type) or callable(v):
            return name(v)
    return None

def plain(v):
    try:
        json.dumps(v)
        return v
    except TypeError:
        return repr(v)

out = []
for a in parser_of()._actions:
    if not a.option_strings:
        continue
    out.append({"options": list(a.option_strings), "dest": a.dest, "action": type(a).__name__,
                "nargs": plain(a.nargs), "const": plain(a.const), "default": plain(a.default),
                "type": name(a.type), "inner": inner(a.type) if a.type is not None else None,
                "choices": [plain(c) for c in a.choices] if a.choices is not None and not isinstance(a.choices, range)
                else None, "help": str(a.help or "")[:300]})
print("PARSER " + json.dumps(out), flush=True)
"""

# Options that cannot be set here, each with why (matched against the option string).
SKIP = [
    (r"^(-h|--help)$", "prints help and exits"),
    (r"^--(model|model-path|model-name|tokenizer|tokenizer-path|tokenizer-worker-num)$|^--model$",
     "the base command's model (another needs another model's files)"),
    (r"path|-file$|-dir$|-directory|certfile|keyfile|ca-certs|template$|^--config$|lora-modules|lora-paths"
     r"|^--hf-config|draft-model|^--download|plugin$|^--uds$|log-config|logging-config|chat-template",
     "needs a file or folder that exists (or a model's own files)"),
    (r"^--(nnodes|node-rank|headless|data-parallel-start-rank|data-parallel-size-local|api-server-count)$",
     "a multi-node or multi-process role (other nodes or processes that are not running here)"),
    (r"^--(tool-server|kv-transfer-config|kv-events-config|ec-transfer-config|disaggregation-bootstrap-port"
     r"|disaggregation-ib-device|otlp-traces-endpoint|collect-detailed-traces)$",
     "talks to a service that is not running here"),
    (r"^--(revision|code-revision|tokenizer-revision|load-format|quantization-param-path|hf-overrides)$",
     "changes which model files are read (the bundled model has config.json only)"),
]

# JSON values for options that take a config as JSON (a key the config has, set to a non-default value).
JSON_VALUES = {
    "--compilation-config": ['{"max_cudagraph_capture_size": 256}', '{"cudagraph_mode": "PIECEWISE"}'],
    "-cc": ['{"max_cudagraph_capture_size": 256}'],
    "--speculative-config": ['{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}'],
    "--eplb-config": ['{"window_size": 500}'],
    "--fault-tolerance-config": ['{"engine_recovery_timeout_sec": 60}'],
    "--attention-config": ['{"backend": "TRITON_ATTN"}', '{"flash_attn_version": 2}'],
    "--structured-outputs-config": ['{"backend": "xgrammar"}'],
    "--profiler-config": ['{"profiler": "torch", "torch_profiler_dir": "/tmp/flagtrace-fidelity-profile"}'],
    "--kernel-config": ['{"enable_flashinfer_autotune": false}'],
    "--weight-transfer-config": ['{"backend": "nccl"}'],
    "--limit-mm-per-prompt": ['{"image": 2}'],
    "--override-generation-config": ['{"temperature": 0.5}'],
    "--model-loader-extra-config": ['{"enable_multithread_load": true}'],
    "--json-model-override-args": ['{"max_position_embeddings": 4096}'],
    "--mm-processor-kwargs": ['{"num_crops": 4}'],
    "--media-io-kwargs": ['{"video": {"num_frames": 8}}'],
    "--default-chat-template-kwargs": ['{"enable_thinking": false}'],
    "--allowed-origins": ['["http://localhost"]'],
    "--allowed-methods": ['["GET"]'],
    "--allowed-headers": ['["x-test"]'],
}
# Nested spellings of a JSON config option (FlexibleArgumentParser: -cc.key=v), vLLM only.
NESTED = ["-cc.max_cudagraph_capture_size=256", "--compilation-config.cudagraph_mode=PIECEWISE", "-cc.mode=0"]

STRINGS = {  # plausible values by the option's name (free-text options)
    "served-model-name": ["flagtrace-model"], "api-key": ["flagtrace-key"], "root-path": ["/flagtrace"],
    "device": ["cuda"], "host": ["127.0.0.1"], "dtype": ["float16", "bfloat16"], "kv-cache-dtype": ["fp8_e4m3", "fp8"],
    "optimization-level": ["3", "0", "1"], "attention-backend": ["TRITON_ATTN", "FLASHINFER", "triton"],
    "quantization": ["fp8"], "-q": ["fp8"], "tool-call-parser": ["hermes", "llama3_json"],
    "reasoning-parser": ["qwen3", "deepseek_r1"], "distributed-executor-backend": ["mp", "ray"],
    "mamba-ssu-algorithm": ["auto"], "safetensors-load-strategy": ["eager", "lazy"],
}


@dataclasses.dataclass
class Option:
    typed: str  # the option string as typed (what requested.option must be)
    dest: str
    action: str
    candidates: list  # [[words]]: argv fragments, tried in order
    skip: str = None  # why it is not exercised
    expect: str = None  # requested.option expected (None: typed); -cc.key: -cc; -O3: --optimization-level
    no_effect: bool = False  # its help says it has no effect (deprecated, accepted and ignored)


def release_of(text):
    framework, _, version = text.partition("==")
    if framework not in ("sglang", "vllm") or not version:
        raise SystemExit("--release takes sglang==V or vllm==V, not %r" % text)
    return framework, version


def envs_root():
    return os.environ.get("FLAGTRACE_ENVS") or os.path.join(ROOT, ".envs")


def python_for(framework, version):
    path = os.path.join(envs_root(), framework, version, "bin", "python")
    if not os.path.exists(path):
        raise SystemExit("%s %s is not built (%s): make %s-env" % (framework, version, path, framework))
    return path


def setup_for(framework):
    return ["sim.gpu", "adapters.sglang_compat" if framework == "sglang" else "adapters.vllm_sim"]


def read_parser(framework, version, gpu, timeout=600):
    """The release's own options: [{options, dest, action, nargs, const, default, type, inner, choices, help}]."""
    python = python_for(framework, version)
    target = Target([python, "-c", "..."], python, [], "code", PARSER, [framework])
    result = run_probe(target, {"observe": False, "gpu": gpus.choose(gpu), "setup": setup_for(framework)},
                       timeout=timeout)
    for line in result.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("PARSER "):
            return json.loads(line[len("PARSER "):])
    raise SystemExit("could not read %s %s's parser:\n%s" % (framework, version,
                                                             result.stderr.decode("utf-8", "replace")[-3000:]))


# -- values ------------------------------------------------------------------------------------------

def _skip_reason(typed, action):
    for pattern, why in SKIP:  # a deprecated option is still exercised: it is still typed
        if re.search(pattern, typed):
            return why
    return None


def _number_candidates(kind, default, dest):
    if kind == "float":
        if isinstance(default, (int, float)) and not isinstance(default, bool) and default:
            d = float(default)
            return [round(d * 0.9, 4), round(d * 2, 4), 0.5] if d < 1 else [d * 2, d / 2, 1.0]
        return [0.5, 1.0, 0.1]
    if isinstance(default, int) and not isinstance(default, bool):
        if default > 2:
            return [default // 2, default * 2, 1]
        if default in (1, 2):
            return [default * 2, 8, 1]
        if default == 0:
            return [1, 2, 8]
        return [1, 2, 8]  # -1: "auto"
    if re.search(r"(^|_)(tp|pp|dp|ep|cp|sp|tensor|pipeline|data|expert|context)(_parallel)?_size$|_size$", dest) \
            and not re.search(r"page|block|chunk|batch|cache|budget|window", dest):
        return [2, 4, 1]
    if re.search(r"len|length|tokens|chunk", dest):
        return [4096, 2048, 8192]
    if re.search(r"timeout|interval|seconds", dest):
        return [30, 60, 5]
    if re.search(r"seed", dest):
        return [1234, 7, 42]
    return [2, 8, 64]


def _values(action, typed, framework):
    """Candidate argv fragments for ``typed`` (an option string of ``action``), or []."""
    kind = action["action"]
    default = action["default"]
    if kind in ("_StoreTrueAction", "_StoreFalseAction", "_StoreConstAction", "DeprecatedStoreTrueAction",
                "DeprecatedStoreConstAction", "_CountAction", "_HelpAction", "_VersionAction"):
        return [[typed]]
    if kind in ("BooleanOptionalAction", "EnableDisableAction") or (action["nargs"] == 0):
        return [[typed]]
    if typed in JSON_VALUES:
        return [[typed, v] for v in JSON_VALUES[typed]]
    choices = action["choices"]
    if choices:
        others = [c for c in choices if c != default and str(c) != str(default) and c not in (None, "")]
        # "auto" and the like last: a value that names a real choice first
        others.sort(key=lambda c: str(c).lower() in ("auto", "none", "default"))
        return [[typed, str(c)] for c in others[:3]]  # nargs + / *: one value is a list of one
    inner = action["inner"] if action["type"] and ("optional_type" in action["type"] or "parse_type" in
                                                     action["type"]) else None
    kind_name = inner or action["type"] or "str"
    if "parse_dataclass" in (action["type"] or "") or kind_name in ("loads",):
        return []  # a JSON config this sweep has no value for (JSON_VALUES)
    name = typed.lstrip("-")
    if is_secret_name(name) and kind_name not in ("int", "float"):
        # a value of its own: flagtrace redacts a secret's value wherever it appears (another
        # option typed with the same word in a combination would be redacted too)
        return [[typed, "sk-fidelity-%s" % name]]
    if name in STRINGS and kind_name not in ("int", "float"):
        return [[typed, v] for v in STRINGS[name]]
    if kind_name in ("int", "float", "human_readable_int", "human_readable_int_or_auto"):
        values = _number_candidates("float" if kind_name == "float" else "int", default, action["dest"])
    elif kind_name == "bool":
        values = ["true", "false"]
    else:
        if name in STRINGS:
            values = STRINGS[name]
        elif isinstance(default, str) and default:
            values = [default + "-flagtrace", "flagtrace"]
        else:
            values = ["flagtrace"]
    return [[typed, str(v)] for v in values]


def options_of(actions, framework):
    """Every option string of the parser as an Option (candidates, or why it is skipped)."""
    out = []
    for action in actions:
        for typed in action["options"]:
            opt = Option(typed, action["dest"], action["action"], [],
                         no_effect=bool(re.search(r"has no effect|is ignored", action["help"], re.I)))
            opt.skip = _skip_reason(typed, action)
            if not opt.skip:
                opt.candidates = _values(action, typed, framework)
                if not opt.candidates:
                    opt.skip = "takes a value this sweep has no generator for (%s)" % (action["inner"] or action["type"])
            out.append(opt)
    if framework == "vllm":
        typed = {o.typed for o in out}
        for nested in NESTED:
            head = nested.split(".", 1)[0]
            if head in typed:
                dest = next(a["dest"] for a in actions if head in a["options"])
                out.append(Option(nested.split("=", 1)[0], dest, "nested", [[nested]], expect=head))
        if "--optimization-level" in typed:  # FlexibleArgumentParser rewrites -O3 before argparse sees it
            out.append(Option("-O3", "optimization_level", "-O", [["-O3"]], expect="--optimization-level"))
    return out


# -- the two resolutions ------------------------------------------------------------------------------

class Release:
    def __init__(self, framework, version, gpu, model, timeout):
        self.framework, self.version, self.gpu, self.timeout = framework, version, gpu, timeout
        self.python = python_for(framework, version)
        self.model = os.path.join(MODELS, model)
        if framework == "sglang":
            self.base = ["--model-path", self.model]
            self.command = [self.python, "-m", "sglang.launch_server"] + self.base
        else:
            self.base = [self.model]
            self.command = [self.python, "-m", "vllm.entrypoints.cli.main", "serve"] + self.base
        self.modules = []

    def untraced(self, fragments):
        """[[words]] (each after the base command) -> [{"fields": {...}} or {"error": text}]."""
        if not fragments:
            return []
        commands = [(self.base + list(words), {}) for words in fragments]
        import observer_support
        import vllm_observer_support

        support = observer_support if self.framework == "sglang" else vllm_observer_support
        results, modules = support.untraced(self.version, {self.gpu: commands}, timeout=120 + 60 * len(commands))
        self.modules = modules or self.modules
        return results[self.gpu]

    def traced(self, fragments, parallel=1):
        """[[words]] -> [analysis (as explain makes it) or {"status": "refused", "message": ...}]."""
        if not fragments:
            return []
        plan = whatif.plan(self.command, Asked(), "fidelity")
        variants = [Variant(list(plan.target.args) + list(words), label=" ".join(words)) for words in fragments]
        out = []
        with VariantSession(plan.target, whatif.gpu_request(plan, self.gpu), self.timeout, env=plan.env,
                            preimport=plan.preimport, expected=len(variants), parallel=parallel) as session:
            for result in session.run(variants):
                try:
                    out.append(whatif.analysis(result))
                except FlagtraceError as exc:
                    out.append({"status": "refused", "message": exc.message})
        return out


# -- the properties ----------------------------------------------------------------------------------

# Fields chosen afresh by every resolution (a free port, a uuid): never equal between two runs.
FRESH = {"parallel_config.data_parallel_master_port", "kv_transfer_config.engine_id"}


def _norm(text):
    return re.sub(r" at 0x[0-9a-f]+", " at 0x?", str(text))


def expected_fields(framework, bare):
    """The untraced resolution's fields, as the report names them (nested configs by their fields)."""
    fields = {k: v for k, v in bare.items() if not k.startswith("_") and "._" not in k}
    if framework == "vllm":  # a nested config is reported field by field, not as a whole
        parents = {k.rsplit(".", 1)[0] for k in fields if "." in k}
        fields = {k: v for k, v in fields.items() if k not in parents}
    return fields


def check(framework, typed_list, bare, analysis, seen=None):
    """The properties for one command; [problem] (empty: it holds). ``typed_list``: [(typed, dest, the requested.option expected)].
    ``seen``: a dict told how many fields were compared and the verdict of each option's field(s)."""
    problems = []
    seen = {} if seen is None else seen
    if "fields" not in bare:
        if analysis.get("status") == "refused":
            return [{"kind": "crash", "text": "flagtrace could not explain it: %s" % analysis.get("message")}]
        if analysis.get("status") != "error":
            problems.append({"kind": "outcome", "expected": "error: %s" % bare.get("error"),
                             "got": analysis.get("status")})
        else:
            want = str(bare.get("error", "")).split(":")[0]
            got = (analysis.get("error") or {}).get("type")
            if want and got and want != got and not (want == "SystemExit" and (analysis.get("error") or {})
                                                     .get("kind") == "argparse"):
                problems.append({"kind": "error type", "expected": want, "got": got})
        return problems
    if analysis.get("status") != "resolved":
        return [{"kind": "outcome", "expected": "resolved",
                 "got": "%s: %s" % (analysis.get("status"), _error_text(analysis))}]
    from observer_support import NONDETERMINISTIC
    NONDETERMINISTIC = set(NONDETERMINISTIC) | FRESH
    table = {f["field"]: f for f in analysis.get("fields", [])}
    expected = expected_fields(framework, bare["fields"])
    if framework == "sglang":
        got = {k: f["final"]["repr"] for k, f in table.items() if "." not in k}
    else:
        got = {k: f["final"]["repr"] for k, f in table.items()}
    split = {k.rsplit(".", 1)[0] for k in got if "." in k}  # configs the report lists field by field
    for name in sorted(set(expected) - set(got)):
        if name not in NONDETERMINISTIC and not any(s == name or s.startswith(name + ".") for s in split):
            problems.append({"kind": "missing", "field": name, "expected": expected[name], "got": None})
    for name in sorted(set(expected) & set(got)):
        if name not in NONDETERMINISTIC and _norm(expected[name]) != _norm(got[name]):
            problems.append({"kind": "value", "field": name, "expected": expected[name], "got": got[name],
                             "verdict": table[name]["verdict"]})
    seen["compared"] = len(set(expected) & set(got))
    for typed, dest, expect in typed_list:
        carriers = [f for f in table.values() if (f.get("requested") or {}).get("typed") == typed]
        seen.setdefault("verdicts", {})[typed] = {f["field"]: f["verdict"] for f in carriers}
        named = [f for f in table.values() if f["field"] == dest or f["field"].endswith("." + dest)]
        if not carriers and not named and not any(k == dest or k.endswith("." + dest) for k in bare["fields"]):
            # a server option, not a config field (vLLM's --port: the frontend's): values and fields checked
            seen.setdefault("not_config", []).append(typed)
            continue
        if not carriers:
            where = named[0] if named else None
            problems.append({"kind": "no request", "option": typed, "field": where["field"] if where else dest,
                             "expected": "a field with requested.typed == %s" % typed,
                             "got": "%s %s" % (where["verdict"], where["final"]["repr"]) if where else
                             "no field named %s in the report" % dest})
        for f in carriers:
            if f["verdict"] not in VERDICTS_ASKED:
                problems.append({"kind": "verdict", "option": typed, "field": f["field"],
                                 "expected": "honoured or overridden", "got": f["verdict"]})
            option = f["requested"].get("option")
            if option != expect:
                problems.append({"kind": "requested.option", "option": typed, "field": f["field"],
                                 "expected": expect, "got": option})
    return problems


def _error_text(analysis):
    error = analysis.get("error") or {}
    return ("%s: %s" % (error.get("type"), " ".join(str(error.get("message", "")).split())[:200])) if error \
        else analysis.get("message")


# -- the sweep ---------------------------------------------------------------------------------------

def sweep(release, options, parallel, log):
    """Single options: find a value that resolves untraced (up to three tries each), trace it, check."""
    live = [o for o in options if not o.skip]
    chosen = {}  # typed -> (words, bare)
    pending = list(live)
    for attempt in range(3):
        batch = [o for o in pending if attempt < len(o.candidates)]
        if not batch:
            break
        started = time.monotonic()
        results = release.untraced([o.candidates[attempt] for o in batch])
        log("untraced round %d: %d commands, %.0fs" % (attempt + 1, len(batch), time.monotonic() - started))
        pending = []
        for o, bare in zip(batch, results):
            if "fields" in bare:
                chosen[o.typed] = (o.candidates[attempt], bare)
            else:
                if attempt == 0:  # none resolves: the first value's refusal is compared
                    chosen[o.typed] = (o.candidates[0], bare)
                pending.append(o)
    started = time.monotonic()
    order = [o for o in live if o.typed in chosen]
    analyses = release.traced([chosen[o.typed][0] for o in order], parallel)
    log("traced: %d commands, %.0fs" % (len(order), time.monotonic() - started))
    rows = []
    for o, analysis in zip(order, analyses):
        words, bare = chosen[o.typed]
        resolved = "fields" in bare
        seen = {}
        problems = check(release.framework, [(o.typed, o.dest, o.expect or o.typed)], bare, analysis, seen)
        outcome = "exercised" if resolved else "refused"
        if o.no_effect and problems and all(p["kind"] == "no request" for p in problems):
            outcome, problems = "ignored", []  # the release accepts it and does nothing with it: no field asked
        rows.append({"option": o.typed, "dest": o.dest, "expect": o.expect or o.typed, "command": words, **seen,
                     "outcome": outcome,
                     "refusal": None if resolved else bare.get("error"), "problems": problems})
    return rows


def draw_combinations(pool, count, seed):
    """``count`` combinations of 2-6 rows of ``pool`` (single-option results), drawn by hypothesis
    with ``seed``: no two rows of one option (its twins, its aliases) or asking for the same field."""
    from hypothesis import HealthCheck, given, seed as hseed, settings, strategies as st

    if len(pool) < 2 or count <= 0:
        return []
    drawn = []

    def fields(row):
        return set((row.get("verdicts") or {}).get(row["option"], {})) | {row["dest"]}

    @hseed(seed)
    # twice as many draws as asked for: some are dropped (two rows asking for one field, a repeat)
    @settings(max_examples=2 * count, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.sampled_from(range(len(pool))), min_size=2, max_size=6, unique=True))
    def draw(indices):
        taken = [f for i in indices for f in fields(pool[i])]
        if len(set(taken)) == len(taken):
            drawn.append(indices)

    draw()
    unique, combos = set(), []
    for indices in drawn:
        key = tuple(sorted(indices))
        if key not in unique and len(combos) < count:
            unique.add(key)
            combos.append([pool[i] for i in indices])
    return combos


def check_combinations(framework, combos, bare, analyses):
    out = []
    for combo, b, analysis in zip(combos, bare, analyses):
        typed = [(r["option"], r["dest"], r["expect"]) for r in combo] if "fields" in b else []
        seen = {}
        problems = check(framework, typed, b, analysis, seen)
        out.append({"options": [r["option"] for r in combo], "command": fragment(combo), **seen,
                    "outcome": "exercised" if "fields" in b else "refused",
                    "refusal": None if "fields" in b else b.get("error"), "problems": problems})
    return out


def fragment(combo):
    return [w for r in combo for w in r["command"]]


def combinations(release, rows, count, seed, parallel, log):
    """``count`` random combinations of 2-6 exercised options (hypothesis, seeded), same properties."""
    pool = sorted({r["option"]: r for r in rows if r["outcome"] == "exercised" and not r["problems"]}.values(),
                  key=lambda r: r["option"])
    combos = draw_combinations(pool, count, seed)
    if not combos:
        return []
    fragments = [fragment(c) for c in combos]
    started = time.monotonic()
    bare = release.untraced(fragments)
    log("combinations untraced: %d commands, %.0fs" % (len(fragments), time.monotonic() - started))
    started = time.monotonic()
    analyses = release.traced(fragments, parallel)
    log("combinations traced: %d commands, %.0fs" % (len(fragments), time.monotonic() - started))
    return shrink_failing(release, combos, check_combinations(release.framework, combos, bare, analyses),
                          parallel, log)


def _signature(problems):
    """What a failure is, for shrinking: the kind and field of each problem (not the values)."""
    return {(p["kind"], p.get("field")) for p in problems}


def shrink(combo, problems, attempt):
    """The smallest part of a failing combination that still fails the same way, found as hypothesis shrinks a
    list: drop one option at a time, keep the first smaller combination whose problems include one of the
    original's (kind and field), until no option can go. ``attempt(combos) -> [problems of each]`` resolves a
    batch (every one-option-smaller combination of a round in one batch). Returns (combo, problems, rounds)."""
    want = _signature(problems)
    rounds = 0
    while len(combo) > 1:
        smaller = [combo[:i] + combo[i + 1:] for i in range(len(combo))]
        rounds += 1
        for candidate, found in zip(smaller, attempt(smaller)):
            if _signature(found) & want:
                combo, problems = candidate, found
                break
        else:
            break
    return combo, problems, rounds


def shrink_failing(release, combos, results, parallel, log):
    """Each failing combination's smallest failing part (``shrunk`` in its result)."""
    def attempt(smaller):
        fragments = [fragment(c) for c in smaller]
        bare, analyses = release.untraced(fragments), release.traced(fragments, parallel)
        return [r["problems"] for r in check_combinations(release.framework, smaller, bare, analyses)]

    for combo, result in zip(combos, results):
        if result["problems"] and len(combo) > 1:
            started = time.monotonic()
            small, problems, rounds = shrink(combo, result["problems"], attempt)
            result["shrunk"] = {"options": [r["option"] for r in small], "command": fragment(small),
                                "problems": problems, "rounds": rounds}
            log("shrunk %s -> %s (%d rounds, %.0fs)" % (" ".join(result["options"]), " ".join(
                result["shrunk"]["options"]), rounds, time.monotonic() - started))
    return results


def summary(framework, version, options, rows, combos):
    skipped = [o for o in options if o.skip]
    failing = [r for r in rows if r["problems"]]
    return {"release": "%s==%s" % (framework, version), "options": len(options),
            "exercised": sum(1 for r in rows if r["outcome"] == "exercised"),
            "refused": sum(1 for r in rows if r["outcome"] == "refused"),
            "ignored": sum(1 for r in rows if r["outcome"] == "ignored"),
            "skipped": len(skipped), "failing": len(failing),
            "combinations": len(combos), "combinations_failing": sum(1 for c in combos if c["problems"])}


def render(doc, out):
    s = doc["summary"]
    out.write("%s: %d options · %d exercised · %d refused by the release (compared) · %d ignored by it · "
              "%d skipped · %d failing\n" % (s["release"], s["options"], s["exercised"], s["refused"],
                                             s["ignored"], s["skipped"], s["failing"]))
    if s["combinations"]:
        out.write("  combinations: %d run · %d failing\n" % (s["combinations"], s["combinations_failing"]))
    reasons = {}
    for item in doc["skipped"]:
        reasons.setdefault(item["why"], []).append(item["option"])
    for why, names in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
        out.write("  skipped (%d): %s: %s\n" % (len(names), why, " ".join(names)))
    for row in doc["results"] + doc["combinations"]:
        for p in row["problems"]:
            out.write("  FAIL %s: %s %s: expected %s, got %s\n" % (
                " ".join(row["command"]), p["kind"], p.get("field", ""), p.get("expected"), p.get("got")))
        if row.get("shrunk"):
            out.write("    smallest failing part: %s\n" % " ".join(row["shrunk"]["command"]))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--release", required=True, action="append", help="sglang==V or vllm==V (repeat)")
    p.add_argument("--gpu", default="H100x8")
    p.add_argument("--model", default=None, help="a bundled model folder (default: a Llama per framework)")
    p.add_argument("--only", default=None, metavar="REGEX", help="the option strings to exercise")
    p.add_argument("--limit", type=int, default=0, help="at most N options (a seeded sample)")
    p.add_argument("--combinations", type=int, default=0, metavar="N")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--parallel", type=int, default=1, help="traced children at once")
    p.add_argument("--timeout", type=float, default=240, help="seconds per traced command")
    p.add_argument("--out", default=None, metavar="FILE", help="JSON results")
    opts = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    docs = []
    for text in opts.release:
        framework, version = release_of(text)

        def log(line):
            sys.stderr.write("[%s %s] %s\n" % (framework, version, line))
            sys.stderr.flush()

        release = Release(framework, version, opts.gpu, opts.model or BASE_MODEL[framework], opts.timeout)
        actions = read_parser(framework, version, opts.gpu)
        options = options_of(actions, framework)
        if opts.only:
            options = [o for o in options if re.search(opts.only, o.typed)]
        if opts.limit and len(options) > opts.limit:
            options = sorted(random.Random(opts.seed).sample(options, opts.limit), key=lambda o: o.typed)
        log("%d options (%d skipped)" % (len(options), sum(1 for o in options if o.skip)))
        rows = sweep(release, options, opts.parallel, log)
        combos = combinations(release, rows, opts.combinations, opts.seed, opts.parallel, log)
        doc = {"summary": summary(framework, version, options, rows, combos), "gpu": opts.gpu,
               "base": [os.path.relpath(w, ROOT) if w.startswith(ROOT) else w for w in release.base],
               "skipped": [{"option": o.typed, "why": o.skip} for o in options if o.skip],
               "results": rows, "combinations": combos}
        docs.append(doc)
        render(doc, sys.stdout)
        if opts.out:
            with open(opts.out, "w", encoding="utf-8") as fh:
                json.dump(docs if len(docs) > 1 else doc, fh, indent=1)
    failing = sum(d["summary"]["failing"] + d["summary"]["combinations_failing"] for d in docs)
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
