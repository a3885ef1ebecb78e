"""Example target: config fields holding values that are hard to render (a repr that raises,
an array-like that refuses to be a bool, a huge int, a recursive list, a __class__ that
raises), one of them under a secret name. The probe must record them without raising."""
import dataclasses
import json


class NoRepr:
    def __repr__(self):
        raise RuntimeError("no repr")


class ArrayLike:
    def __eq__(self, other):
        return ArrayLike()

    __ne__ = __eq__
    __hash__ = object.__hash__

    def __bool__(self):
        raise ValueError("the truth value of an array with more than one element is ambiguous")


class NoClass:
    @property
    def __class__(self):
        raise RuntimeError("no __class__")


@dataclasses.dataclass
class OddConfig:
    blob: object = None
    key: object = None
    big: int = 0
    loop: list = dataclasses.field(default_factory=list)
    ghost: object = None

    def __post_init__(self):
        self.blob = NoRepr()
        self.key = ArrayLike()
        self.big = 10 ** 5000
        self.loop.append(self.loop)
        self.ghost = NoClass()


def main():
    config = OddConfig()
    print(json.dumps({"big_bits": config.big.bit_length(), "loop_len": len(config.loop),
                      "types": sorted(type(v).__name__ for v in vars(config).values())}, sort_keys=True))


if __name__ == "__main__":
    main()
