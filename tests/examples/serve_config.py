"""Example target: argparse into a dataclass whose __post_init__ resolves the config.

Traced for real by the tests. Each numbered case is one kind of change flagtrace explains.
Prints the final config as JSON so the observer-effect test can compare runs.
"""
import argparse
import dataclasses
import json
import logging
import os
import sys

logger = logging.getLogger("serve_config")


@dataclasses.dataclass
class ServeConfig:
    model: str = "tiny"
    speculative: str = None
    cache_strategy: str = "auto"
    disable_cache: bool = False
    page_size: int = 16
    attention: str = "auto"
    device: str = "gpu"
    max_batch: int = None
    api_key: str = None

    def __post_init__(self):
        self._decide_cache_strategy()
        self._adjust_for_model()
        self._choose_attention()
        self._validate()
        os.environ["SERVE_CACHE_STRATEGY"] = self.cache_strategy  # (vi) sets os.environ

    def uses_hybrid_cache(self):
        return self.model.startswith("hybrid")

    def _decide_cache_strategy(self):
        # (ii) decides an "auto" value
        if self.cache_strategy == "auto":
            self.cache_strategy = "no_buffer"

    def _adjust_for_model(self):
        # (i) overrides an explicit flag under a condition
        if self.uses_hybrid_cache() and self.page_size > 1:
            logger.warning("page_size %s is not supported for hybrid models; using 1", self.page_size)
            self.page_size = 1
        if self.speculative is not None and self.max_batch is None:
            self.max_batch = 48

    def _choose_attention(self):
        # (iii) an if/elif/else chain
        if self.attention != "auto":
            pass
        elif self.device == "cpu":
            self.attention = "torch_native"
        elif self.model.startswith("hybrid"):
            self.attention = "flash"
        else:
            self.attention = "triton"

    def _validate(self):
        # (v) a validation error naming a value the user never passed
        if self.speculative is not None and not self.disable_cache:
            if self.cache_strategy == "no_buffer":
                raise ValueError(
                    "speculative decoding is not compatible with the cache when using "
                    "--cache-strategy no_buffer"
                )


def parse(argv):
    parser = argparse.ArgumentParser(prog="serve_config")
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--speculative-algorithm", dest="speculative", default=None)
    parser.add_argument("--cache-strategy", default="auto")
    parser.add_argument("--disable-cache", action="store_true")
    parser.add_argument("--page-size", type=int, default=16)
    parser.add_argument("--attention", default="auto")
    parser.add_argument("--device", default="gpu")
    parser.add_argument("--max-batch", type=int, default=None)
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--chatty", type=int, default=0, help="print this many lines first")
    parser.add_argument("--read-stdin", action="store_true")
    args = parser.parse_args(argv)
    return args


def start(config):
    """Where serving would begin (the stop point)."""
    print("serving with", json.dumps(dataclasses.asdict(config), sort_keys=True))


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    for i in range(args.chatty):  # (vii) prints heavily to stdout
        print("line %d of chatter %s" % (i, "x" * 40))
    if args.read_stdin:  # (vii) reads stdin
        data = sys.stdin.read()
        print("read %d bytes from stdin" % len(data))
    fields = {f.name for f in dataclasses.fields(ServeConfig)}
    config = ServeConfig(**{k: v for k, v in vars(args).items() if k in fields})
    start(config)
    return config


if __name__ == "__main__":
    main()
