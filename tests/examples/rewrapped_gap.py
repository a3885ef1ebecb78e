"""Example target (issue 24): code that loads the GPU driver fails under --gpu, and the framework logs
that cause and raises an error of its own that only says "check the logs" (vLLM 0.15's model
inspection: "Model architectures [...] failed to be inspected")."""
import argparse
import dataclasses
import logging

logger = logging.getLogger("rewrapped_gap")


def load_driver():
    raise AssertionError("libcuda.so cannot found!\nPlease make sure GPU is set up")


@dataclasses.dataclass
class Config:
    model: str = "m"
    inspected: bool = False

    def __post_init__(self):
        try:
            load_driver()
            self.inspected = True
        except Exception:
            logger.exception("Error in loading model architecture %r", self.model)
        if not self.inspected:
            raise ValueError("Model architectures ['%s'] failed to be inspected. Please check the logs for more "
                             "details." % self.model)


def start(config):
    pass


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="m")
    start(Config(model=p.parse_args().model))


if __name__ == "__main__":
    main()
