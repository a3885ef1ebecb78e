"""Benchmark target: a watched config whose resolve() assigns its fields N times
(default 100,000). Prints only the final config as JSON."""
import argparse
import dataclasses
import json


@dataclasses.dataclass
class TunedConfig:
    batch: int = 1
    budget: int = 0
    scale: float = 1.0
    label: str = "start"

    def resolve(self, n):
        for i in range(n // 4):
            self.batch = i % 64 + 1
            self.budget = self.budget + self.batch
            self.scale = self.scale * 0.5 + 1.0
            self.label = "step" if i % 2 else "half"


def main():
    parser = argparse.ArgumentParser(prog="many_writes")
    parser.add_argument("--writes", type=int, default=100000)
    args = parser.parse_args()
    config = TunedConfig()
    config.resolve(args.writes)
    print(json.dumps(dataclasses.asdict(config), sort_keys=True))


if __name__ == "__main__":
    main()
