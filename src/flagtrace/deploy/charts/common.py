"""What the chart modules share: the values as a template sees them (Values: the chart's values.yaml merged with
the file as helm merges them, a map key by key and a list replacing the whole list; each value's key and
file:line), a value printed as helm prints it (go: every number a float64, 1000000 is 1e+06), the env entries a
template writes, the GPUs of a container's limits, the Launch of a rendered container (launch_of), what a chart
refuses (Refused), and the record of a chart (Chart)."""
import collections
import decimal
import os

from .. import images
from ..entry_points import recognise, wrapper_of
from ..kubelet_env import GPU_RESOURCES, PLACEHOLDER, VAR_REF, container_env, expand
from ..model import Launch, Token
from ..shell_script import unwrap
from ..strategic_merge import merge
from ..yaml_lines import value_lines

RELEASE = "RELEASE"  # the release name, only known to helm install (as in `helm template RELEASE ...`)


class Refused(Exception):
    """What the chart's ``required`` or ``fail`` says: helm template renders nothing. (message, template)"""


class Values:
    """The chart's values.yaml merged with the file's, seen from a path (``at``): a value (``values(*keys)``),
    whether its map has a key (``has``, helm's hasKey) and where it came from (``origin``)."""

    def __init__(self, chart, source, tree, lines, path=()):
        self.chart, self.source, self.tree, self.lines, self.path = chart, source, tree, lines, path
        self.file = os.path.basename(source)

    @classmethod
    def of(cls, chart, artifact):
        tree = merge(chart.defaults, artifact.documents[0], merge_keys={})  # as helm merges a values file
        return cls(chart, artifact.source, tree, value_lines(artifact.text))

    def at(self, *keys):
        return Values(self.chart, self.source, self.tree, self.lines, self.path + keys)

    def root(self):
        return Values(self.chart, self.source, self.tree, self.lines)

    def __call__(self, *keys):
        node = self.tree
        for key in self.path + keys:
            if isinstance(node, dict):
                node = node.get(key)
            elif isinstance(node, list) and isinstance(key, int) and key < len(node):
                node = node[key]
            else:
                return None
        return node

    def has(self, key):
        return isinstance(self(), dict) and key in self()

    def key(self, *keys):
        """The dotted name of a value (an item of a list in ``keys``: the list's name)."""
        keys = list(keys)
        while keys and isinstance(keys[-1], int):
            keys.pop()
        named = self.path + tuple(keys)
        return "".join("[%d]" % k if isinstance(k, int) else ("." if i else "") + str(k) for i, k in enumerate(named))

    def origin(self, *keys):
        """``key (file:line)`` for a value the file sets (a list's item: its own line), else the chart's default."""
        line = self.lines.get(self.path + keys)
        if line:
            return "%s (%s:%d)" % (self.key(*keys), self.file, line)
        return "%s (the chart's values.yaml, %s %s)" % (self.key(*keys), self.chart.label, self.chart.version)

    def template(self, name):
        return "chart template %s (%s %s)" % (name, self.chart.label, self.chart.version)

    def word(self, *keys):
        return Token(go(self(*keys)), self.origin(*keys))

    def flag(self, flag, key):
        """The flag and the key's value, both from the key."""
        return [Token(flag, self.origin(key)), self.word(key)]


def go(value):
    """A value as a template prints it (``{{ x }}``, ``quote``): helm reads every number as a float64, printed
    by Go's %v (4096, 0.8, 1e+06); booleans true/false; null nothing."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        number = decimal.Decimal(repr(float(value))).normalize()
        exponent = number.adjusted()
        if -4 <= exponent < 6 or not number:  # %v's shortest form: plain from 1e-4 to below 1e+06
            return format(number, "f")
        digits = "".join(map(str, number.as_tuple().digits))
        return "%s%s%se%s%02d" % ("-" if number < 0 else "", digits[0], "." + digits[1:] if digits[1:] else "",
                                  "-" if exponent < 0 else "+", abs(exponent))
    return str(value)


def yaml_text(value):
    """A list item as ``toYaml`` writes it and the API server reads it back (a number as JSON writes it)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return go(value) if isinstance(value, bool) or value is None else str(value)


def sprig_int(value):
    """sprig's ``int``: a number truncated, a numeric string parsed, anything else 0."""
    if isinstance(value, (bool, int, float)):
        return int(value)
    try:
        return int(float(str(value).strip()))
    except (TypeError, ValueError):
        return 0


def pair(name, value):
    return {"name": name, "value": value}


def field(name, path):
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def secret(name, secret, key):
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}


def gpus_of(limits):
    """(count, vendor) of a container's resources.limits."""
    for resource, vendor in GPU_RESOURCES.items():
        if resource in limits:
            return sprig_int(limits[resource]), vendor
    return 0, ""


def launch_of(values, name, image, tokens, entries, gpus, notes=(), given=None, index=("0", "the first pod")):
    """The Launch of one rendered container as the kubelet runs it: its env (``entries`` as a pod spec lists
    them, after what a controller injects: ``given``), its words with ``$(VAR)`` expanded and a ``bash -c``
    script's framework command; None when it runs no framework."""
    notes = list(notes)
    env = dict(given or {}, **container_env({"env": entries}, notes, index))
    words, undefined = _expanded(tokens, env)
    argv = [t.text for t in words]
    framework, wrapper = recognise(argv), wrapper_of(argv) or images.wrapper_image(image, {})
    if not framework and not wrapper:
        return None
    release, note = images.release_of(image) if image else ("", "")
    problem = ("%s: %s: the container's env does not define %s (Kubernetes passes it on as typed); add it to env:"
               % (values.source, name, ", ".join(undefined))) if undefined else ""
    held = [t for t in argv if PLACEHOLDER.fullmatch(t)]
    return Launch(source=values.source, name=name, tokens=words, env=env, image=image, gpus=gpus[0],
                  gpu_vendor=gpus[1], release=release, notes=([note] if note else []) + notes, framework=framework,
                  wrapper=wrapper, problem=problem, placeholders=list(dict.fromkeys(held)))


def _expanded(tokens, env):
    """(the words as the kubelet passes them, ``$(VAR)`` the env does not define)."""
    words, undefined = [], []
    for token in tokens:
        text, used = expand(token.text, env)
        undefined += ["$(%s) (%s)" % (n, token.origin) for n in VAR_REF.findall(text) if n not in env]
        words.append(Token(text, token.origin + (", $(%s) from env" % ", ".join(used) if used else "")))
    inner = unwrap(words, env)
    return (inner.tokens if inner else words), undefined


# a chart flagtrace renders: its defaults (what the templates read of values.yaml), how its values look
# (recognise: doc -> bool) and what its templates make of them (render: Values -> [Launch])
Chart = collections.namedtuple("Chart", "label version commit reference defaults recognise render")
