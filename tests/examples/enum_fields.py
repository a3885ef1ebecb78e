"""Enum-valued config fields (issue 24): a member of an enum defined beside the config is a value,
not a nested config; a string option converted to the member is the value asked for."""
import argparse
import dataclasses
import enum
import sys


class Level(enum.IntEnum):
    O0 = 0
    O2 = 2
    O3 = 3


class Shapes(enum.Enum):
    BACKED = "backed"
    UNBACKED = "unbacked"


@dataclasses.dataclass
class Config:
    level: object = Level.O2
    shapes: object = Shapes.BACKED
    eager: bool = False

    def __post_init__(self):
        if isinstance(self.level, str):
            self.level = Level(int(self.level))  # what a validator does with "-O3"
        if self.eager:
            self.level = Level.O0


def start(config):
    print("serving with", config)


def main():
    parser = argparse.ArgumentParser(prog="enum_fields")
    parser.add_argument("--level", default=Level.O2)
    parser.add_argument("--eager", action="store_true")
    args = parser.parse_args(sys.argv[1:])
    start(Config(level=args.level, eager=args.eager))


if __name__ == "__main__":
    main()
