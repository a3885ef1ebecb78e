"""Example target: prints what a program can see of how it was started (for the observer test)."""
import dataclasses
import json
import os
import sys
import warnings


@dataclasses.dataclass
class SeenConfig:
    name: str = "auto"

    def __post_init__(self):
        if self.name == "auto":
            self.name = os.path.basename(__file__)


def main():
    config = SeenConfig()
    seen = {
        "file": __file__,
        "name": __name__,
        "argv": sys.argv,
        "path0": sys.path[0],
        "doc": __doc__,
        "main_is_this": sys.modules["__main__"].main is main,
        "globals": sorted(k for k in globals() if k.startswith("__")),
        "loader": type(__loader__).__name__,
        "spec": __spec__ is None,
        "package": __package__,
        "tracer": sys.gettrace() is None,
        "profiler": sys.getprofile() is None,
        "warnings_filters": len(warnings.filters),
        "exit_hooks": sys.excepthook is sys.__excepthook__,
        "stdin_is_tty": sys.stdin.isatty(),
        "config": dataclasses.asdict(config),
    }
    print(json.dumps(seen, sort_keys=True, indent=1))


if __name__ == "__main__":
    main()
