"""Example target: a launcher that checks the host for an RDMA NIC and a NUMA layout while it
resolves. Under --gpu the InfiniBand devices are simulated; /sys/devices/system/node is not, so
this machine answers it and the report lists that query as not simulated."""
import argparse
import dataclasses
import os


@dataclasses.dataclass
class HostConfig:
    ib_device: str = ""
    numa_bind: bool = False
    device: str = "cuda"
    rdma_check: bool = False

    def __post_init__(self):
        if self.rdma_check:  # what some launchers do to see RDMA: load libibverbs, run ibv_devinfo
            import ctypes
            import subprocess

            try:
                ctypes.CDLL("libibverbs.so.1")
            except OSError:
                pass
            try:
                subprocess.run(["ibv_devinfo", "-l"], capture_output=True)
            except OSError:
                pass
        if self.device == "npu":
            try:
                import torch_npu  # noqa: F401
            except ImportError:
                raise ImportError("torch_npu is required when run on npu device.")
        if self.ib_device:
            available = os.listdir("/sys/class/infiniband")
            if self.ib_device not in available:
                raise ValueError("IB device %s not found; available: %s" % (self.ib_device, available))
        if self.numa_bind and not os.path.isdir("/sys/devices/system/node/node7"):
            raise ValueError("--numa-bind needs 8 NUMA nodes")


def start(config):
    pass


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ib-device", default="")
    p.add_argument("--numa-bind", action="store_true")
    p.add_argument("--device", default="cuda")
    p.add_argument("--rdma-check", action="store_true")
    args = p.parse_args()
    start(HostConfig(**vars(args)))


if __name__ == "__main__":
    main()
