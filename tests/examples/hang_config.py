"""Example target for the variant runner: ``--hang`` starts a helper process and never finishes
resolving (the variant's timeout must end both)."""
import argparse
import dataclasses
import subprocess
import sys
import time


@dataclasses.dataclass
class HangConfig:
    hang: bool = False
    size: int = 1

    def __post_init__(self):
        if self.hang:
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
            time.sleep(120)
        self.size = self.size * 2


def main():
    parser = argparse.ArgumentParser(prog="hang_config")
    parser.add_argument("--hang", action="store_true")
    parser.add_argument("--size", type=int, default=1)
    args = parser.parse_args()
    print(HangConfig(hang=args.hang, size=args.size))


if __name__ == "__main__":
    main()
