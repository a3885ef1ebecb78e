"""Example target: a config whose resolution reads environment variables, through an env
module (``envs.APP_WORKERS``, evaluated at each access) and ``os.getenv``; ``--safe`` sets
one of them in code first. A validator's error is re-raised by message only, as pydantic does.
"""
import argparse
import dataclasses
import json
import os


class _Envs:
    def __getattr__(self, name):
        return os.environ.get(name)


envs = _Envs()


class ValidationError(Exception):
    pass


@dataclasses.dataclass
class WorkerConfig:
    workers: int = 1
    dense: bool = True

    def __post_init__(self):
        if self.workers <= 1:
            self.workers = int(envs.APP_WORKERS or 1)
        if os.getenv("APP_SAFE_MODE") == "1":
            self.workers = 1
        if self.workers > 1 and self._sparse_allowed():
            self.dense = False
        if self.workers > 1 and self.dense and not envs.APP_ALLOW_DENSE:
            raise ValueError("several workers need a sparse model")

    def _sparse_allowed(self):
        return os.getenv("APP_ALLOW_SPARSE") == "1"


def build(workers, dense):
    message = None
    try:
        return WorkerConfig(workers=workers, dense=dense)
    except ValueError as exc:
        message = str(exc)
    raise ValidationError("1 validation error for WorkerConfig: %s" % message)


def main():
    parser = argparse.ArgumentParser(prog="env_config")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--sparse", action="store_true")
    parser.add_argument("--safe", action="store_true")
    args = parser.parse_args()
    if args.safe:
        os.environ["APP_SAFE_MODE"] = "1"
    config = build(args.workers, not args.sparse)
    print(json.dumps(dataclasses.asdict(config), sort_keys=True))


if __name__ == "__main__":
    main()
