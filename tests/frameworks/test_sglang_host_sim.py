"""PD disaggregation on a simulated box: SGLang checks the --disaggregation-ib-device names against
/sys/class/infiniband. The simulated box has one NIC per GPU plus every device the command names,
so a prefill command copied from a recipe resolves, with the devices listed as simulated."""
import pytest

from sglang_support import run_sglang

PREFILL = ["--model-path", "deepseek-ai/DeepSeek-V3", "--tp", "8", "--trust-remote-code",
           "--disaggregation-mode", "prefill", "--disaggregation-ib-device", "mlx5_bond_0,mlx5_bond_1"]
DEVICES = ["mlx5_%d" % i for i in range(8)] + ["mlx5_bond_0", "mlx5_bond_1"]


@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
def test_pd_prefill_with_ib_devices_resolves_under_simulation(version):
    run = run_sglang(version, PREFILL, gpu="H100x8")
    assert run.rc == 0, run
    ib = run.field("disaggregation_ib_device")
    assert (ib["verdict"], ib["final"]["value"]) == ("honoured", "mlx5_bond_0,mlx5_bond_1")
    assert "/sys/class/infiniband, /dev/infiniband: %s" % ", ".join(DEVICES) in run.doc["simulation"]["patched"]
    listing = [e for e in run.trace["events"] if e["kind"] == "hw" and e["query"] == "os.listdir('/sys/class/infiniband')"]
    assert listing and listing[0]["result"] == repr(DEVICES) and not listing[0].get("unanswered")
    assert "ib_devices" in listing[0]["at"]["func"]
