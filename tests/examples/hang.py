"""Example target: builds its config, starts two `sleep` children (one in its own session,
as daemons do) and then hangs. Writes the three pids, one a line, to the file in argv[1]."""
import dataclasses
import os
import subprocess
import sys
import time


@dataclasses.dataclass
class HangConfig:
    workers: int = 0

    def __post_init__(self):
        if self.workers == 0:
            self.workers = 2


def main():
    config = HangConfig()
    same_group = subprocess.Popen(["sleep", "600"])
    own_session = subprocess.Popen(["sleep", "601"], start_new_session=True)
    with open(sys.argv[1] + ".part", "w") as fh:
        fh.write("%d\n%d\n%d\n" % (os.getpid(), same_group.pid, own_session.pid))
    os.replace(sys.argv[1] + ".part", sys.argv[1])
    print("workers", config.workers, flush=True)
    while True:
        time.sleep(1)


if __name__ == "__main__":
    main()
