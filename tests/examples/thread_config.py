"""Example target for the variant runner's fallback: its resolution imports a module that starts
a thread (thread_helper.py). Once the runner's parent has imported it too, forking would copy a
process with another thread running; each later variant runs in a process of its own."""
import argparse
import dataclasses


@dataclasses.dataclass
class ThreadConfig:
    workers: int = 1
    scaled: int = 0

    def __post_init__(self):
        import thread_helper

        self.scaled = self.workers * thread_helper.SCALE


def main():
    parser = argparse.ArgumentParser(prog="thread_config")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    print(ThreadConfig(workers=args.workers))


if __name__ == "__main__":
    main()
