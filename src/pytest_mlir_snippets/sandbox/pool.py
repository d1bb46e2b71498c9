"""The device fixture: one sandbox worker and its device per pytest process.

Plugin-owned (kept in ``config.stash``), opened lazily by the first execute
item, never by compile items, reused by every item after it, and reopened
(then probed) after a crash or a timeout replaced the worker.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import copy
from collections.abc import Callable

from pytest_mlir_snippets.client import Client, Sandbox
from pytest_mlir_snippets.protocol import DeviceFacts, Kind, Op, Options, Request, Response
from pytest_mlir_snippets.settings import Settings


class DeviceManager(Client):
    def __init__(self, settings: Settings,
                 on_open: Callable[[int | None, DeviceFacts], None] | None = None) -> None:
        self.settings = settings
        self.on_open = on_open
        self.sandbox = Sandbox(settings.target, settings.memory_limit, fixed_layout=settings.bench_layout == "fixed")
        self.device_id = settings.device_id
        self.opened = 0  # how many times a device was opened, for reports and tests
        self._device_worker: int | None = None  # the sandbox start whose device is open
        self._options: Options | None = None

    @property
    def base_options(self) -> Options:
        """The options every request of this manager starts from, shared: never changed
        (``dataclasses.replace`` makes an item's own; ``options()`` a copy to change)."""
        if self._options is None:
            self._options = self.settings.request_options(device_id=self.device_id)
        return self._options

    def options(self) -> Options:
        """A copy of ``base_options``, for a caller to change."""
        return copy.copy(self.base_options)

    def call(self, request: Request, timeout: float | None = None) -> Response:
        """Send ``request`` (opening the device first, if the worker has none open)."""
        timeout = self.settings.timeout if timeout is None else timeout
        if request.op.executes and not self._device_is_open():
            opened = self._open(timeout)
            if not opened.ok:
                if not opened.skip:  # "no CUDA device" says it all
                    opened.message = f"the device could not be opened: {opened.message}"
                if opened.kind is Kind.PASS:
                    opened.kind = Kind.EXECUTE_ERROR
                return opened
        response = self.sandbox.call(request, timeout)
        if response.kind is Kind.CRASH and request.op is Op.COMPILE:  # which step it crashed in
            from pytest_mlir_snippets.sandbox import crashtriage

            return crashtriage.locate(self.settings.target, self.settings.memory_limit, request, response, timeout)
        return response

    def submit(self, request: Request) -> bool:
        """Send a compile request ahead (see ``Sandbox.submit``); ``call`` takes its answer."""
        return not request.op.executes and self.sandbox.submit(request)

    def _device_is_open(self) -> bool:
        """Open on the current worker (a replaced worker has lost its device)."""
        return self.sandbox.alive and self._device_worker == self.sandbox.starts

    def _open(self, timeout: float | None) -> Response:
        response = self.sandbox.open_device(self.options(), timeout)
        if response.ok:
            self.opened += 1
            self._device_worker = self.sandbox.starts
            if self.on_open is not None:
                self.on_open(self.device_id, response.device or DeviceFacts())
        return response

    def close(self) -> None:
        if self._device_is_open():
            self.sandbox.close_device(self.options(), self.settings.timeout)
        self._device_worker = None
        self.sandbox.close()
