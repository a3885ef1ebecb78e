"""AMD SMI (the ``amdsmi`` Python package) on a simulated AMD box: what ROCm builds of the
frameworks ask it before anything loads (platform detection, the GPU's name, gfx arch, memory,
XGMI links), answered from the profile and recorded as hardware queries. On a box without the
package the stand-in table (standins.json) provides the module; its functions are set here.
Standard library only, Python >= 3.9.
"""

XGMI = 2  # amdsmi's AmdSmiIoLinkType.XGMI


class AmdSmiException(Exception):
    pass


def patch(sim, amdsmi):
    """Set ``amdsmi``'s query functions to answer from ``sim.profile``."""

    def asic_info(handle=0):
        p = sim.profile
        return {"market_name": p["device_name"], "vendor_id": "0x1002", "vendor_name": "Advanced Micro Devices Inc.",
                "device_id": p.get("pci_device_id", ""), "rev_id": "0x00", "asic_serial": "",
                "num_compute_units": p["sm_count"],
                "target_graphics_version": p.get("gcn_arch", "").split(":")[0]}

    answers = {
        "amdsmi_get_processor_handles": lambda: list(range(sim.count)),
        "amdsmi_get_gpu_asic_info": asic_info,
        "amdsmi_get_gpu_memory_total": lambda handle=0, kind=None: sim.memory()[1],
        "amdsmi_get_gpu_device_uuid": lambda handle=0: "00ff74a1-0000-1000-80%02x-000000000000" % handle,
        "amdsmi_topo_get_link_type": lambda a=0, b=0: {"hops": 1, "type": XGMI},
        "amdsmi_topo_get_numa_node_number": lambda handle=0: 0 if handle < max(1, sim.count // 2) else 1,
        "amdsmi_get_gpu_driver_info": lambda handle=0: {"driver_name": "amdgpu",
                                                        "driver_version": sim.profile["driver_version"]},
    }
    plumbing = {"amdsmi_init": lambda *a, **k: None, "amdsmi_shut_down": lambda *a, **k: None}
    for name, fn in plumbing.items():
        setattr(amdsmi, name, fn)
    for name, fn in answers.items():
        def query(*args, _fn=fn, _name=name):
            return sim._record("amdsmi.%s()" % _name, _fn(*args))

        query.__name__ = name
        setattr(amdsmi, name, query)
        sim.answers["amdsmi.%s()" % name] = fn
    if getattr(amdsmi, "__flagtrace_stand_in__", False):
        amdsmi.AmdSmiException = AmdSmiException
        amdsmi.AmdSmiMemoryType = type("AmdSmiMemoryType", (), {"VRAM": 0, "VIS_VRAM": 1, "GTT": 2})
        amdsmi.AmdSmiIoLinkType = type("AmdSmiIoLinkType", (), {"XGMI": XGMI})
    sim.patched.append("amdsmi (%d functions)" % len(answers))
