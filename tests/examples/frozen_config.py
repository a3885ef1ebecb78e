"""Example target: a frozen dataclass adjusted through object.__setattr__, a list field
appended to in place, and a nested config object changed by attribute.

Prints the final config as JSON so the observer-effect test can compare runs.
"""
import argparse
import dataclasses
import json
import sys


@dataclasses.dataclass
class GraphConfig:
    backend: str = "auto"
    max_bs: int = 8


@dataclasses.dataclass(frozen=True)
class EngineConfig:
    dtype: str = "auto"
    paths: list = dataclasses.field(default_factory=list)
    graph: GraphConfig = dataclasses.field(default_factory=GraphConfig)
    quantization: str = None

    def __post_init__(self):
        if self.dtype == "auto":
            object.__setattr__(self, "dtype", "bfloat16")  # (iv) bypasses the frozen __setattr__
        if self.quantization == "fp8":
            self.paths.append("/opt/kernels/fp8")  # (iv) in place, no assignment
        register_defaults(self)
        if self.graph.backend == "auto":
            self.graph.backend = "full"  # (iv) nested object's attribute


def register_defaults(config):
    config.paths.append("/opt/kernels/common")


def main():
    parser = argparse.ArgumentParser(prog="frozen_config")
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--quantization", default=None)
    parser.add_argument("--path", dest="paths", action="append", default=[])
    args = parser.parse_args()
    config = EngineConfig(dtype=args.dtype, paths=list(args.paths), quantization=args.quantization)
    print(json.dumps(dataclasses.asdict(config), sort_keys=True))


if __name__ == "__main__":
    main()
