"""The one client of a sandbox worker: one typed method per request (``protocol.requests``),
for the pytest process's items, the ``mlir_device`` fixture, the ONNX backend and the
tools, and for a worker's own reference worker (``worker/judging/reference.py``).

``Sandbox`` owns a worker process (``workerprocess.WorkerProcess``) and opens the target's
device on it before the first request that runs code, and again after every start of a
fresh worker (a crash or a timeout replaced the last one): a device lives in its worker.

Standard library and ``protocol`` only: the pytest process and the workers both use it.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import TYPE_CHECKING

from pytest_mlir_snippets.protocol import (
    Bisect,
    CheckPipeline,
    CheckSchedule,
    CloseDevice,
    Compile,
    DeviceFacts,
    Driver,
    Execute,
    Inputs,
    Kind,
    Op,
    OpenDevice,
    Options,
    Ping,
    Probe,
    PytorchBenchmark,
    PytorchCompile,
    Recorded,
    Reference,
    Request,
    Response,
    Run,
)
from pytest_mlir_snippets.registry import TARGETS
from pytest_mlir_snippets.workerprocess import WorkerProcess

if TYPE_CHECKING:
    import numpy as np


class Client(abc.ABC):
    """One typed method per request; a subclass says how a request is sent and answered
    (``call``). ``timeout``: seconds to wait for the answer (None: the client's own
    default where it has one, else no limit)."""

    @abc.abstractmethod
    def call(self, request: Request, timeout: float | None = None) -> Response:
        """Send ``request`` and wait for its answer (a crash or timeout is an answer too)."""

    def ping(self, timeout: float | None = None) -> Response:
        """``pid``: the worker's."""
        return self.call(Ping(), timeout)

    def open_device(self, options: Options, timeout: float | None = None) -> Response:
        """``device``: what was opened."""
        return self.call(OpenDevice(options=options), timeout)

    def probe(self, options: Options, timeout: float | None = None) -> Response:
        return self.call(Probe(options=options), timeout)

    def close_device(self, options: Options, timeout: float | None = None) -> Response:
        return self.call(CloseDevice(options=options), timeout)

    def check_pipeline(self, pipeline: str, timeout: float | None = None) -> Response:
        return self.call(CheckPipeline(pipeline), timeout)

    def check_schedule(self, schedule: str, options: Options, timeout: float | None = None) -> Response:
        """``steps``: the schedule's transform steps."""
        return self.call(CheckSchedule(schedule, options=options), timeout)

    def compile(self, module: str, function: str, options: Options, recorded: Recorded | None = None,
                timeout: float | None = None) -> Response:
        return self.call(Compile(module, function, recorded, options=options), timeout)

    def execute(self, module: str, function: str, options: Options, recorded: Recorded | None = None,
                timeout: float | None = None) -> Response:
        return self.call(Execute(module, function, recorded, options=options), timeout)

    def bisect(self, module: str, function: str, options: Options, recorded: Recorded | None = None,
               timeout: float | None = None) -> Response:
        """Which step of a golden-mismatch's pipeline its results diverge after (``triage.diverged_after``)."""
        return self.call(Bisect(module, function, recorded, options=options), timeout)

    def run(self, module: str, function: str, options: Options, inputs: list[np.ndarray], specialize: bool = False,
            timeout: float | None = None) -> Response:
        """``inputs``: the caller's; the results come back unjudged (``values``)."""
        return self.call(Run(module, function, Recorded(inputs), specialize, options=options), timeout)

    def reference(self, module: str, function: str, options: Options, inputs: list[np.ndarray],
                  timeout: float | None = None) -> Response:
        """This worker's target's outputs for ``function`` on ``inputs``: the reference
        of another target's run (``values``, and ``verdict``: its golden and name)."""
        return self.call(Reference(module, function, Recorded(inputs), options=options), timeout)

    def inputs(self, module: str, function: str, options: Options, timeout: float | None = None) -> Response:
        """The seeded inputs an execute of ``function`` is given (``values``)."""
        return self.call(Inputs(module, function, options=options), timeout)

    def driver(self, module: str, function: str, options: Options, recorded: Recorded | None = None,
               compare: bool = True, timeout: float | None = None) -> Response:
        """A failed execute's reproducer (``driver``, ``files``)."""
        return self.call(Driver(module, function, recorded, compare, options=options), timeout)

    def pytorch_compile(self, reference: str, options: Options, timeout: float | None = None) -> Response:
        """An optimization run's PyTorch reference (``reference``: its reference.py) compiled."""
        return self.call(PytorchCompile(reference, options=options), timeout)

    def pytorch_benchmark(self, reference: str, options: Options, timeout: float | None = None) -> Response:
        """... and timed."""
        return self.call(PytorchBenchmark(reference, options=options), timeout)


class Sandbox(Client):
    """A worker of one target in a process of its own, with the target's device opened
    (``device``: the options it is opened with; ``on_open``: told what each open found)."""

    def __init__(self, target: str, memory_limit: int | None = None, env: dict[str, str] | None = None,
                 fixed_layout: bool = True, device: Options | None = None,
                 on_open: Callable[[DeviceFacts], None] | None = None) -> None:
        """``memory_limit``: bytes of address space (RLIMIT_AS) for the worker; ``env``: its
        environment (None: this process's); ``fixed_layout``: no address-space randomization."""
        self.target = target
        self.process = WorkerProcess(target, memory_limit, env, fixed_layout)
        self.device = device if device is not None else Options(target=target)
        self.on_open = on_open
        self.opened = 0  # how many times a device was opened, for reports and tests
        self._device_worker: int | None = None  # the worker start whose device is open
        self._warmed: int | None = None  # the worker start whose device was opened before a compile

    @property
    def alive(self) -> bool:
        return self.process.alive

    @property
    def starts(self) -> int:
        return self.process.starts

    def call(self, request: Request, timeout: float | None = None) -> Response:
        """Send ``request``, the device opened first when it runs code and this worker has
        none open; a device that does not open is the answer."""
        if request.op.executes and not self.device_is_open():
            opened = self._open(timeout)
            if not opened.ok:
                return opened
        elif request.op is Op.COMPILE and self._warm_start():
            self._warmed = self.process.starts + (not self.process.alive)
            self._open(timeout)  # with a timeout of its own, before the compile's; a failure is the execute's
        return self.process.call(request, timeout)

    def _warm_start(self) -> bool:
        """Whether to open the device before this worker's first compile (``Target.opens_before_compile``)."""
        target = TARGETS.get(self.target)
        return bool(target and target.opens_before_compile) and not self.device_is_open() and \
            self._warmed != self.process.starts + (not self.process.alive)

    def submit(self, request: Request) -> bool:
        """Send a request that runs no code ahead (``WorkerProcess.submit``); ``call`` takes its answer."""
        return not request.op.executes and self.process.submit(request)

    def device_is_open(self) -> bool:
        """Open on the current worker (a replaced worker has lost its device)."""
        return self.process.alive and self._device_worker == self.process.starts

    def _open(self, timeout: float | None) -> Response:
        response = self.process.call(OpenDevice(options=self.device), timeout)
        if response.ok and response.device is not None:
            self.opened += 1
            self._device_worker = self.process.starts
            if self.on_open is not None:
                self.on_open(response.device)
            return response
        if not response.skip:  # "no CUDA device" says it all
            response.message = f"the device could not be opened: {response.message}"
        if response.kind is Kind.PASS:
            response.kind = Kind.EXECUTE_ERROR
        return response

    def close(self, timeout: float | None = None) -> None:
        """Release the device (when one is open) and stop the worker."""
        if self.device_is_open():
            self.process.call(CloseDevice(options=self.device), timeout)
        self._device_worker = None
        self.process.close()
