"""Example target: writes binary garbage (invalid UTF-8, NUL, escape codes) to stdout and
stderr around an ordinary config resolution."""
import dataclasses
import json
import sys

GARBAGE = bytes(range(256)) * 64 + b"\xff\xfe\x00\x1b[2J\x1b]0;pwned\x07\xc3\x28\n"


@dataclasses.dataclass
class BlobConfig:
    codec: str = "auto"
    chunk: int = 4096

    def __post_init__(self):
        if self.codec == "auto":
            self.codec = "raw"


def main():
    sys.stdout.buffer.write(GARBAGE)
    sys.stdout.flush()
    sys.stderr.buffer.write(GARBAGE)
    sys.stderr.flush()
    config = BlobConfig()
    sys.stdout.buffer.write(GARBAGE)
    sys.stdout.write("\n" + json.dumps(dataclasses.asdict(config), sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
