"""The double of ``_ttmlir_runtime.runtime``: mesh devices, counted."""

import enum
import itertools

from _tt_double_log import log

_ids = itertools.count()
_current = {"runtime": None}


class DispatchCoreType(enum.Enum):
    ETH = "ETH"
    WORKER = "WORKER"


class DeviceRuntime(enum.Enum):
    TTNN = "TTNN"
    TTMetal = "TTMetal"


class FabricConfig(enum.Enum):
    DISABLED = "DISABLED"
    FABRIC_1D = "FABRIC_1D"


class MeshDeviceOptions:
    def __init__(self):
        self.dispatch_core_type = DispatchCoreType.ETH
        self.mesh_shape = (1, 1)
        self.device_ids = []


class Device:
    def __init__(self, number):
        self.number = number
        self.open = True


def set_current_device_runtime(runtime):
    _current["runtime"] = runtime
    log("set_current_device_runtime", runtime=runtime.value)


def open_mesh_device(options):
    device = Device(next(_ids))
    log("open_mesh_device", device=device.number, mesh_shape=list(options.mesh_shape),
        dispatch_core_type=options.dispatch_core_type.value, device_ids=list(options.device_ids),
        runtime=_current["runtime"].value if _current["runtime"] else None)
    return device


def close_mesh_device(device):
    device.open = False
    log("close_mesh_device", device=device.number)


def set_fabric_config(config):
    log("set_fabric_config", config=config.value)
