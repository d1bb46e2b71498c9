"""IREE's runtime in the worker (``iree-base-runtime``): one device per worker, modules
loaded from ``.vmfb`` bytes, functions called with numpy arrays.

IREE's ``check`` module (``iree_check.py``) is in every context, beside the HAL module.
The device is opened once (``open``) and reopened by ``reset`` after a failed run;
a loaded module belongs to the runtime's VM instance, which outlives resets, and
its context (the module bound to the device's HAL module) is made again for the
new device. ``iree-run-module`` flags of an IREE config map here: ``--device=``
picks the driver and device, runtime flags (``--task_topology_group_count=2``) go
to the runtime's flag parser, and those only the tool knows are listed as ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pytest_mlir_snippets.golden.inputs import DTYPES
from pytest_mlir_snippets.protocol import DeviceFacts, Kind
from pytest_mlir_snippets.worker.targets.base import SnippetFailure
from pytest_mlir_snippets.worker.targets.iree_check import CheckModule

# iree-run-module flags that name what each item already says, or the tool's own data
ITEM_FLAGS = ("--function", "--input", "--expected_output", "--output", "--module", "--flagfile")


@dataclass
class Program:
    """A compiled snippet: its ``.vmfb``; its module and context once it ran."""

    vmfb: bytes
    module: Any = None
    context: Any = None
    device_generation: int = -1  # of the device its context was made for


@dataclass
class RunFlags:
    """A config's ``iree_run_module_flags``, sorted by where they go."""

    device: str | None = None  # "local-task", "local-sync", "cuda://0", ...
    runtime: list[str] = field(default_factory=list)  # for the runtime's flag parser
    ignored: list[str] = field(default_factory=list)


def sort_run_flags(flags: list[str]) -> RunFlags:
    sorted_flags = RunFlags()
    for flag in flags:
        name = flag.split("=", 1)[0]
        if name == "--device":
            sorted_flags.device = flag.split("=", 1)[1]
        elif name in ITEM_FLAGS:
            sorted_flags.ignored.append(flag)
        else:
            sorted_flags.runtime.append(flag)
    return sorted_flags


class Runtime:
    """A driver's device, the VM instance and the HAL module bound to the device."""

    def __init__(self, uri: str, runtime_flags: list[str]) -> None:
        import iree.runtime as rt

        self.rt = rt
        self.driver_name, _, self.path = uri.partition("://")
        self.runtime_flags = runtime_flags
        self.instance: Any = None
        self.device: Any = None
        self.hal: Any = None
        self.generation = 0
        self.ignored_flags: list[str] = []
        self.device_id: int | None = None  # --mlir-devices' id, kept for reopening
        self.check: CheckModule | None = None  # IREE's check module, in Python (iree_check.py)

    def open(self, device_id: int | None) -> DeviceFacts:
        rt = self.rt
        self.device_id = device_id
        for flag in self.runtime_flags:  # one by one: an unknown flag is noted, the others still apply
            try:
                rt.flags.parse_flags(flag)
            except ValueError:
                if flag not in self.ignored_flags:
                    self.ignored_flags.append(flag)
        try:
            driver = rt.get_driver(self.driver_name)
            devices = driver.query_available_devices()
        except (RuntimeError, ValueError) as error:
            raise SnippetFailure(Kind.UNSUPPORTED, self.unavailable(str(error))) from None
        if not devices:
            raise SnippetFailure(Kind.UNSUPPORTED, self.unavailable("the driver reports no device"))
        index = int(self.path) if self.path.isdigit() else device_id or 0
        chosen = devices[index % len(devices)]  # IREE's description of the device
        self.instance = self.instance or rt.VmInstance()
        self.device = driver.create_device(chosen["device_id"])
        self.hal = rt.create_hal_module(self.instance, self.device)
        if self.check is None:
            self.check = CheckModule(rt, self.instance)
        self.check.device = self.device
        self.generation += 1
        return DeviceFacts(f"{self.driver_name}: {chosen.get('name') or chosen['device_id']}", device_id,
                           list(self.ignored_flags))

    def unavailable(self, why: str) -> str:
        return f"no CUDA device: {why}" if self.driver_name == "cuda" else f"IREE driver {self.driver_name}: {why}"

    def probe(self) -> None:
        """A round trip through the device: a small buffer there and back."""
        value = np.arange(4, dtype=np.float32)
        if not np.array_equal(self.rt.asdevicearray(self.device, value).to_host(), value):
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"the {self.driver_name} device gave back other data")

    def close(self) -> None:
        self.hal = self.device = None

    def call(self, program: Program, function: str, inputs: list[np.ndarray], args: list[Any],
             results: list[Any]) -> list[np.ndarray]:
        """Run ``function`` of ``program`` on copies of ``inputs``; the results on the host."""
        rt = self.rt
        if self.device is None:
            raise SnippetFailure(Kind.EXECUTE_ERROR, "the IREE device is not open")
        if program.module is None:
            program.module = rt.VmModule.copy_buffer(self.instance, program.vmfb)
        if program.device_generation != self.generation:  # made for a device since reset
            assert self.check is not None
            program.context = rt.VmContext(self.instance, modules=[self.hal, self.check.module, program.module])
            program.device_generation = self.generation
        entry = program.module.lookup_function(function)
        if entry is None:
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"the module has no function @{function}")
        invoker = rt.FunctionInvoker(program.context, self.device, entry)
        if self.check is not None:
            self.check.calls = []
        try:
            returned = invoker(*[_argument(v, spec) for v, spec in zip(inputs, args)])
        except Exception as error:  # the runtime's status: a failed dispatch, a bad shape
            raise SnippetFailure(Kind.EXECUTE_ERROR, f"execution failed: {error}") from None
        values = list(returned) if isinstance(returned, (tuple, list)) else [] if returned is None else [returned]
        return [_host(v, spec) for v, spec in zip(values, results)]


def _argument(value: np.ndarray, spec: Any) -> Any:
    """A numpy input as IREE takes it: a scalar argument as a Python number, arrays as
    C-contiguous arrays (0-d arrays included: a ``tensor<f32>``)."""
    if spec.kind == "scalar":
        return np.asarray(value).item()
    return np.require(value, requirements="C")  # not ascontiguousarray: it makes a 0-d array 1-d


def _host(value: Any, spec: Any) -> np.ndarray:
    """A returned value as a numpy array of the result's element type."""
    array = np.asarray(value.to_host() if hasattr(value, "to_host") else value)
    dtype = DTYPES.get(getattr(spec, "element", ""), None)
    if dtype is not None and array.dtype != dtype and array.dtype.itemsize == dtype.itemsize:
        array = array.view(dtype)  # bf16 and unsigned come back as raw integers of the same width
    elif dtype is not None and array.dtype != dtype:
        array = array.astype(dtype)
    return np.array(array, copy=True)
