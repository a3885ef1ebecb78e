"""Example target: a launcher that checks the host for an RDMA NIC, a NUMA layout, its CPUs and a
NIC's speed while it resolves. Under --gpu the InfiniBand devices, NUMA nodes and CPU count are
simulated; /sys/class/net is not, so this machine answers it and the report lists that query as
not simulated."""
import argparse
import dataclasses
import os


@dataclasses.dataclass
class HostConfig:
    ib_device: str = ""
    numa_bind: bool = False
    device: str = "cuda"
    rdma_check: bool = False
    nic: str = ""
    workers: int = 0

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
        if self.workers == 0:
            with open("/sys/devices/system/node/node0/cpulist") as fh:
                first = fh.read().split(",")[0].split("-")
            self.workers = min(os.cpu_count(), int(first[-1]) - int(first[0]) + 1)
        if self.nic:
            try:
                with open("/sys/class/net/%s/speed" % self.nic) as fh:
                    fh.read()
            except OSError:
                raise ValueError("cannot read the speed of NIC %s" % self.nic)
        if self.device == "xpu":  # as vLLM's platform detection says it where no platform plugin answers
            raise RuntimeError("Failed to infer device type")
        if self.device == "kernels":  # a kernel package the environment lacks, imported while resolving
            import flagtrace_missing_kernels  # noqa: F401


def start(config):
    pass


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ib-device", default="")
    p.add_argument("--numa-bind", action="store_true")
    p.add_argument("--device", default="cuda")
    p.add_argument("--rdma-check", action="store_true")
    p.add_argument("--nic", default="")
    p.add_argument("--workers", type=int, default=0)
    args = p.parse_args()
    start(HostConfig(**vars(args)))


if __name__ == "__main__":
    main()
