"""Per-process state of a run, kept in ``config.stash``.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import pytest

from pytest_mlir_snippets.protocol import Kind, Request, Response
from pytest_mlir_snippets.settings import Settings

if TYPE_CHECKING:
    from pytest_mlir_snippets.api.device import MlirDevice

    # a type only: items (which hold the expectations' formats) sit above the session
    from pytest_mlir_snippets.items.expectations import ExpectationSource
    from pytest_mlir_snippets.model.record import ItemRecord
    from pytest_mlir_snippets.sandbox.cache import CompileCache
    from pytest_mlir_snippets.sandbox.pool import DeviceManager


DEADLINE = pytest.StashKey[float]()  # when pytest-timeout's timer ends a test (time.monotonic())
DEVICE: pytest.StashKey[MlirDevice] = pytest.StashKey()  # a test's mlir_device, on its item


@dataclass
class RunState:
    settings: Settings
    config: pytest.Config
    expectations: ExpectationSource | None = None
    compiled: dict[str, Response] = field(default_factory=dict)  # snippet id -> compile response
    managers: dict[str, DeviceManager] = field(default_factory=dict)
    compile_cache: CompileCache | None = None  # made at first use: config.cache comes after our configure
    # node id -> the record an item of this process just put on its report as data: the
    # recorder of the same process (no xdist) takes it as it is rather than decoding the data
    handed: dict[str, ItemRecord] = field(default_factory=dict)

    def compile(self, request: Request, timeout: float | None, group: str | None = None) -> Response:
        """A compile request: from the compile cache, else from the sandbox (then kept);
        ``group``: the input file it is part of (the cache keeps a pack per file)."""
        cache = self.cache()
        cached = cache.get(request, group)
        if cached is not None:
            return cached
        response = self.device_manager().call(request, timeout)
        cache.put(request, response, group)
        return response

    def cache(self) -> CompileCache:
        if self.compile_cache is None:
            from pytest_mlir_snippets.sandbox.cache import CompileCache

            self.compile_cache = CompileCache(self.config, self.settings.no_cache)
        return self.compile_cache

    def device_manager(self, target: str | None = None) -> DeviceManager:
        """The sandbox and device of ``target`` (default: --mlir-target); an optimization
        run may name its own target, so a session can hold one per target."""
        target = target or self.settings.target
        if target not in self.managers:
            hook = self.config.hook

            def opened(device_id: int | None, info: dict[str, Any]) -> None:
                hook.pytest_mlir_device_opened(config=self.config, target=target, device_id=device_id, info=info)

            from pytest_mlir_snippets.sandbox.pool import DeviceManager  # the sandbox: when something runs

            self.managers[target] = DeviceManager(replace(self.settings, target=target), opened)
        return self.managers[target]

    def close(self) -> None:
        try:
            for manager in self.managers.values():
                manager.close()
        finally:
            if self.compile_cache is not None:
                self.compile_cache.close()


STATE = pytest.StashKey[RunState]()


# targets whose compile --mlir-pipeline replaces (the IREE targets take IREE's flags instead)
PIPELINE_TARGETS = ("cpu", "cuda")


def check_pipeline(settings: Settings) -> None:
    """``--mlir-pipeline`` (or ini ``mlir_pipeline``) parsed once, before the run, in a
    sandbox worker (the pytest process loads no MLIR): a pipeline MLIR cannot parse is a
    usage error naming the unknown passes and the registered ones nearest to them, not a
    compile-error of every item."""
    if not settings.pipeline or settings.target not in PIPELINE_TARGETS:
        return
    from pytest_mlir_snippets.client import Sandbox

    sandbox = Sandbox(settings.target, settings.memory_limit)
    try:
        answer = sandbox.check_pipeline(settings.pipeline, timeout=max(60.0, settings.timeout))
    finally:
        sandbox.close()
    if answer.kind is Kind.COMPILE_ERROR:
        raise pytest.UsageError(f"--mlir-pipeline {settings.pipeline!r}: {answer.message}")


def run_state(config: pytest.Config) -> RunState:
    return config.stash[STATE]
