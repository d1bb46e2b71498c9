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
        self.device_id = settings.device_id
        self._options: Options | None = None
        self.sandbox = Sandbox(settings.target, settings.memory_limit, fixed_layout=settings.bench_layout == "fixed",
                               device=self.base_options,
                               on_open=None if on_open is None else lambda facts: on_open(self.device_id, facts))

    @property
    def opened(self) -> int:
        """How many times a device was opened, for reports and tests."""
        return self.sandbox.opened

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
        """Send ``request`` (the sandbox opens the device first, if its worker has none open)."""
        timeout = self.settings.timeout if timeout is None else timeout
        response = self.sandbox.call(request, timeout)
        if response.kind is Kind.CRASH and request.op in (Op.COMPILE, Op.ITERATION):  # which step it crashed in
            from pytest_mlir_snippets.triage import crashtriage

            return crashtriage.locate(self.settings.target, self.settings.memory_limit, request, response, timeout)
        return response

    def submit(self, request: Request) -> bool:
        """Send a compile request ahead (see ``Sandbox.submit``); ``call`` takes its answer."""
        return self.sandbox.submit(request)

    def close(self) -> None:
        self.sandbox.close(self.settings.timeout)
