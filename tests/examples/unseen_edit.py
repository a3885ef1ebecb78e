"""Example target: a list field edited in place by code that never received the config object
(only the list), outside any of its methods: no assignment, no window to diff."""
import dataclasses
import json


@dataclasses.dataclass
class Config:
    paths: list = dataclasses.field(default_factory=list)


def main():
    config = Config()
    extra = config.paths
    extra.append("/opt/kernels")
    print(json.dumps(dataclasses.asdict(config)))


if __name__ == "__main__":
    main()
