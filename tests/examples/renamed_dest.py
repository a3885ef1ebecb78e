"""An option whose dest is copied to the config under another name (as SGLang's from_cli_args does)."""
import argparse
import copy
import dataclasses
import pickle
import sys


@dataclasses.dataclass
class Config:
    tp_size: int = 1
    dp_size: int = 1

    def __post_init__(self):
        if self.dp_size > self.tp_size:
            self.dp_size = self.tp_size


def from_cli_args(args):
    args.tp_size = args.tensor_parallel_size
    args.dp_size = args.data_parallel_size
    return Config(tp_size=args.tp_size, dp_size=args.dp_size)


def start(config):
    print("serving with", config)


def main():
    parser = argparse.ArgumentParser(prog="renamed_dest")
    parser.add_argument("--tensor-parallel-size", "--tp", dest="tensor_parallel_size", type=int, default=1)
    parser.add_argument("--data-parallel-size", "--dp", dest="data_parallel_size", type=int, default=1)
    args = parser.parse_args(sys.argv[1:])
    config = from_cli_args(args)
    # the namespace still behaves as argparse's own: repr, pickling and copying
    same = (repr(args) == "Namespace(tensor_parallel_size=%d, data_parallel_size=%d, tp_size=%d, dp_size=%d)"
            % (args.tp_size, args.dp_size, args.tp_size, args.dp_size)
            and type(pickle.loads(pickle.dumps(args))) is argparse.Namespace
            and pickle.loads(pickle.dumps(args)) == args and copy.deepcopy(args) == args)
    if not same:
        sys.exit("the namespace no longer behaves as argparse's own: %r" % (args,))
    start(config)


if __name__ == "__main__":
    main()
