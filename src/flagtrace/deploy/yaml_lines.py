"""YAML documents whose strings remember the line they stand on, so that a token's origin can say
``deploy.yaml:31``."""
from ..core.exitcodes import ExitCode, FlagtraceError


class Line(str):
    """A string from the YAML with the line it stands on (1-based)."""
    line = 0


def load_documents(text, source):
    """Every YAML document of the text, strings carrying their line; one line on a parse error."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def scalar(loader, node):
        value = Line(loader.construct_scalar(node))
        value.line = node.start_mark.line + 1
        return value

    Loader.add_constructor("tag:yaml.org,2002:str", scalar)
    try:
        return [d for d in yaml.load_all(text, Loader=Loader) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = " line %d" % (mark.line + 1) if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise FlagtraceError("-f %s:%s is not valid YAML: %s" % (source, where, problem), ExitCode.USAGE)
