"""The simulated box's host side (probe/sim/host.py): InfiniBand devices exist under --gpu, and every
hardware / OS path the simulation does not answer is listed with the line that asked."""

import pytest

from ft_support import PY, example, field, run_cli

WATCH = ["--watch", "host_check:HostConfig", "--stop-at", "host_check:start"]


def test_infiniband_devices_are_simulated(no_leftovers):
    r = run_cli(["explain", "--gpu", "H100x8", "--format", "json", *WATCH, "--", PY, example("host_check.py"),
                 "--ib-device", "mlx5_3"])
    assert r.rc == 0, r
    assert field(r.doc, "ib_device")["verdict"] == "honoured"
    assert "/sys/class/infiniband, /dev/infiniband: %s" % ", ".join("mlx5_%d" % i for i in range(8)) in \
        r.doc["simulation"]["patched"]
    assert r.doc["unanswered"] == []


def test_a_device_beyond_the_box_is_refused_by_the_target(no_leftovers):
    r = run_cli(["explain", "--gpu", "H100x2", "--format", "json", *WATCH, "--", PY, example("host_check.py"),
                 "--ib-device", "mlx5_3"])
    assert r.rc == 2 and r.doc["error"]["message"] == "IB device mlx5_3 not found; available: ['mlx5_0', 'mlx5_1']"
    assert [h for h in r.doc["error"]["hardware"] if h["query"] == "os.listdir('/sys/class/infiniband')"]


def test_numa_nodes_and_cpus_are_simulated(no_leftovers):
    r = run_cli(["explain", "--gpu", "H100x8", "--format", "json", *WATCH, "--", PY, example("host_check.py"),
                 "--numa-bind"])
    assert r.rc == 2 and r.doc["error"]["message"] == "--numa-bind needs 8 NUMA nodes"
    asked = {h["query"]: h["result"] for h in r.doc["error"]["hardware"]}
    assert asked["os.path.isdir('/sys/devices/system/node/node7')"] == "False"
    assert r.doc["unanswered"] == []
    r = run_cli(["explain", "--gpu", "H100x8", "--format", "json", *WATCH, "--", PY, example("host_check.py")])
    assert r.rc == 0, r
    workers = field(r.doc, "workers")
    assert (workers["initial"]["value"], workers["final"]["value"]) == (0, 56)  # 224 CPUs, 2 nodes: 0-55 first
    assert workers["changes"][0]["line"] == 46
    assert "224 CPUs on 2 NUMA nodes (/sys/devices/system/node, os.cpu_count, psutil.cpu_count)" in \
        r.doc["simulation"]["patched"]


def test_unanswered_query_is_listed_and_named_in_the_error(no_leftovers):
    r = run_cli(["explain", "--gpu", "H100x8", "--format", "json", *WATCH, "--", PY, example("host_check.py"),
                 "--nic", "flagtrace-test0"])
    [u] = r.doc["unanswered"]
    assert (u["query"], u["func"], u["line"]) == (
        "open('/sys/class/net/flagtrace-test0/speed')", "HostConfig.__post_init__", 49)
    assert u["result"] == "'raised FileNotFoundError'"
    assert r.rc == 2 and r.doc["error"]["message"] == "cannot read the speed of NIC flagtrace-test0"
    assert any("/sys/class/net/flagtrace-test0/speed')" in h["text"] and "may come from the simulation" in h["text"]
               for h in r.doc["error"]["hints"])
    md = run_cli(["explain", "--gpu", "H100x8", "--format", "markdown", *WATCH, "--", PY, example("host_check.py"),
                  "--nic", "flagtrace-test0"])
    assert "- not simulated (this machine answered): `open('/sys/class/net/flagtrace-test0/speed')`" in md.out


def test_without_a_simulation_nothing_is_audited(no_leftovers):
    r = run_cli(["explain", "--format", "json", *WATCH, "--", PY, example("host_check.py"), "--numa-bind"])
    assert r.doc["unanswered"] == [] and r.doc["simulation"] is None


def test_an_error_naming_what_is_not_simulated_says_so(no_leftovers):
    r = run_cli(["explain", "--gpu", "H100x8", "--format", "json", *WATCH, "--", PY, example("host_check.py"),
                 "--device", "npu"])
    # the simulation's limit, not the target's own error: exit 3 (flagtrace could not run it as the box would)
    assert r.rc == 3 and r.doc["error"]["message"] == "torch_npu is required when run on npu device."
    gap = "an Ascend NPU (torch_npu) is not simulated (--gpu simulates the GPUs, not this)"
    assert r.doc["error"]["simulation_gap"] == gap and {"text": gap} in r.doc["error"]["hints"]
    assert "flagtrace: a simulation gap, not the target's own error: %s; the target raised ImportError" % gap in r.err


def test_a_gap_behind_the_frameworks_own_error_is_a_gap(no_leftovers):
    """issue 24: the cause (an AssertionError naming libcuda.so) is logged and the framework raises its own
    "failed to be inspected. Please check the logs" (vLLM 0.15.1 on Qwen3-Next): was exit 2, the
    framework's own error."""
    argv = ["explain", "--gpu", "H100", "--watch", "rewrapped_gap:Config", "--stop-at", "rewrapped_gap:start",
            "--", PY, example("rewrapped_gap.py")]
    r = run_cli(argv[:1] + ["--format", "json"] + argv[1:])
    assert r.rc == 3, r
    error = r.doc["error"]
    assert error["type"] == "ValueError" and "failed to be inspected" in error["message"]
    assert error["simulation_gap"] == ("the CUDA driver library (libcuda.so) is not simulated: code that loads it "
                                       "directly needs the real driver (--gpu simulates the GPUs, not this)")
    assert "AssertionError: libcuda.so cannot found!" in error["logs"][-1]["message"]
    terminal = run_cli(argv)
    assert terminal.rc == 3 and "SIMULATION GAP the CUDA driver library (libcuda.so) is not simulated" in \
        " ".join(terminal.out.split())
    # without a simulation it is the target's own error
    plain = run_cli(["explain", "--format", "json"] + argv[3:])
    assert plain.rc == 2 and "simulation_gap" not in plain.doc["error"]


def test_driver_libraries_and_tools_the_simulation_does_not_answer_are_listed(no_leftovers):
    r = run_cli(["explain", "--gpu", "H100x8", "--format", "json", *WATCH, "--", PY, example("host_check.py"),
                 "--rdma-check"])
    assert r.rc == 0, r
    by_query = {u["query"]: u for u in r.doc["unanswered"]}
    lib = by_query["ctypes.CDLL('libibverbs.so.1')"]
    assert (lib["func"], lib["line"]) == ("HostConfig.__post_init__", 25)
    assert lib["result"].startswith(("'failed: ", "'loaded'"))
    tool = by_query["ibv_devinfo -l"]
    assert (tool["func"], tool["line"], tool["result"]) == ("HostConfig.__post_init__", 29, "'run on this machine'")


@pytest.mark.parametrize("device, gap", [
    ("xpu", "the device type the command asks for (an XPU, NPU, TPU or another accelerator --gpu does not name) is "
            "not simulated: the framework's platform detection found none (--gpu simulates the GPUs, not this)"),
    ("kernels", "the module flagtrace_missing_kernels is not installed where the command ran: flagtrace's release "
                "environments leave out GPU-only packages and what resolution does not import (the image on the GPU "
                "box may have it; --python names an interpreter that does)")])
def test_a_device_or_module_the_simulation_lacks_is_a_gap(device, gap, no_leftovers):
    """issue 37: an accelerator --gpu does not simulate ("Failed to infer device type", as vLLM says it for XPU,
    NPU or TPU targets) and a module the environment lacks (Dynamo's kvbm) were exit 2, the framework's own
    error; they are exit 3 with the gap named. Without a simulation they stay the target's own error."""
    argv = ["explain", "--format", "json", *WATCH, "--", PY, example("host_check.py"), "--device", device]
    r = run_cli(argv[:1] + ["--gpu", "H100x8"] + argv[1:])
    assert r.rc == 3, r
    assert r.doc["error"]["simulation_gap"] == gap
    plain = run_cli(argv)
    assert plain.rc == 2 and "simulation_gap" not in plain.doc["error"]
