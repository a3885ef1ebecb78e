"""Example target: a server that makes temporary files at start and removes them when it shuts
down (as Dynamo's logging config and vLLM's Prometheus folder are): stopped before it serves, it
never removes them. Its config records where they are."""
import argparse
import atexit
import dataclasses
import os
import shutil
import tempfile

METRICS_DIR = tempfile.mkdtemp(prefix="metrics_")  # at import, as vLLM's Prometheus folder
atexit.register(shutil.rmtree, METRICS_DIR, True)  # never runs: the server is stopped before its end


@dataclasses.dataclass
class ServerConfig:
    log_config: str = ""
    metrics_dir: str = ""

    def __post_init__(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
            fh.write('{"version": 1}')
        self.log_config = fh.name
        self.metrics_dir = METRICS_DIR


def serve(config):
    os._exit(0)  # a server that is killed, not shut down: nothing registered at exit runs


def main():
    argparse.ArgumentParser().parse_args()
    serve(ServerConfig())


if __name__ == "__main__":
    main()
