"""Example target for ``flagtrace fix``: an explicit page size that a condition chain overrides
unless the backend or (through a helper, in an ``elif``) the KV-cache type allows it, and a
validation error that a compared constant explains (speculative decoding wants at most 64
requests at once; one of the constant's neighbours hangs). Prints the final config as JSON."""
import argparse
import dataclasses
import json
import os
import time


@dataclasses.dataclass
class FixConfig:
    backend: str = "auto"
    kv_cache_dtype: str = "auto"
    page_size: int = 16
    max_batch: int = 256
    speculative: str = None
    draft_tokens: int = None
    chunked_prefill: bool = True

    def __post_init__(self):
        self._choose_page_size()
        self._speculative_defaults()
        self._validate()

    def uses_fp8_cache(self):
        return self.kv_cache_dtype.startswith("fp8")

    def _choose_page_size(self):
        if self.backend == "flash":
            pass
        elif self.uses_fp8_cache():
            pass
        elif self.page_size > 1:
            self.page_size = 1

    def _speculative_defaults(self):
        if self.speculative is not None and self.draft_tokens is None:
            self.draft_tokens = 4
        if os.getenv("FIX_EAGER") == "1":
            self.chunked_prefill = False

    def _validate(self):
        if self.max_batch == 63:  # a candidate fix that hangs: fix kills it at --timeout and goes on
            time.sleep(120)
        if self.speculative is not None and self.max_batch > 64:
            raise ValueError("speculative decoding supports at most 64 requests at once")


def main():
    parser = argparse.ArgumentParser(prog="fix_config")
    parser.add_argument("--backend", default="auto", choices=["auto", "flash", "triton"])
    parser.add_argument("--kv-cache-dtype", default="auto", choices=["auto", "fp8_e4m3", "bf16"])
    parser.add_argument("--page-size", type=int, default=16)
    parser.add_argument("--max-batch", type=int, default=256)
    parser.add_argument("--speculative-algorithm", dest="speculative", default=None)
    parser.add_argument("--no-chunked-prefill", dest="chunked_prefill", action="store_false")
    args = parser.parse_args()
    config = FixConfig(**vars(args))
    print(json.dumps(dataclasses.asdict(config), sort_keys=True))


if __name__ == "__main__":
    main()
