"""Example target for ``flagtrace run``: a JSON argument applied during resolution.

``--overrides '{"page_size": 64}'`` is parsed in ``LaunchConfig.__post_init__``; a value that is
not JSON (re-quoted by a launch script) makes resolution raise.
"""
import argparse
import dataclasses
import json
import sys


@dataclasses.dataclass
class LaunchConfig:
    model: str = "tiny"
    page_size: int = 16
    attention: str = "auto"
    overrides: str = None

    def __post_init__(self):
        if self.overrides:
            for key, value in json.loads(self.overrides).items():
                setattr(self, key, value)
        if self.attention == "auto":
            self.attention = "flash" if self.page_size > 1 else "triton"


def start(config):
    """Where serving would begin (the stop point)."""
    print("serving with", json.dumps(dataclasses.asdict(config), sort_keys=True))


def main():
    parser = argparse.ArgumentParser(prog="json_config")
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--page-size", type=int, default=16)
    parser.add_argument("--attention", default="auto")
    parser.add_argument("--overrides", default=None, help="JSON object of field values")
    args = parser.parse_args(sys.argv[1:])
    start(LaunchConfig(**vars(args)))


if __name__ == "__main__":
    main()
