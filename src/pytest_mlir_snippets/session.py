"""Per-process state of a run, kept in ``config.stash``.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import pytest

from pytest_mlir_snippets.protocol import (
    DeviceFacts,
    FunctionRequest,
    Kind,
    Response,
    Stage,
    SubjectKind,
    group_json,
)
from pytest_mlir_snippets.registry import TARGETS
from pytest_mlir_snippets.settings import Settings

if TYPE_CHECKING:
    from pytest_mlir_snippets.model.record import ItemRecord
    from pytest_mlir_snippets.sandbox.cache import CompileCache
    from pytest_mlir_snippets.sandbox.pool import DeviceManager


DEADLINE = pytest.StashKey[float]()  # when pytest-timeout's timer ends a test (time.monotonic())


def is_xdist_worker(config: pytest.Config) -> bool:
    """Whether this process is an xdist worker (the controller writes the reports)."""
    return hasattr(config, "workerinput")


class ExpectationSource(Protocol):
    """What items and the recorder ask of an expectations file, whatever its format
    (``items.expectations``, ``items.ireeconfig``): the session holds one."""

    path: Path

    @property
    def compile_flags(self) -> list[str]: ...

    @property
    def run_flags(self) -> list[str]: ...

    def status_of(self, file: Path, name: str, stage: Stage) -> str | None: ...

    def skip_reason(self, file: Path, name: str, stage: Stage) -> str | None: ...

    def reason(self, stage: str) -> str: ...

    def update(self, records: list[ItemRecord], rootpath: Path) -> None: ...


@dataclass(frozen=True)
class Subject:
    """What a compile is of: the key of ``RunState.compile``'s memo."""

    kind: SubjectKind
    file: str  # the input file (a Python test's source: its path, or "<mlir>")
    name: str  # a function's unique id, an iteration's folder, a RUN item's name, an entry
    target: str  # the target it is compiled for


@dataclass
class RunState:
    settings: Settings
    config: pytest.Config
    expectations: ExpectationSource | None = None
    compiled: dict[Subject, Response] = field(default_factory=dict)  # this process's compiles, by subject
    ahead: dict[Subject, FunctionRequest | Response] = field(default_factory=dict)  # compiles sent ahead (prefetch)
    managers: dict[str, DeviceManager] = field(default_factory=dict)
    compile_cache: CompileCache | None = None  # made at first use: config.cache comes after our configure
    # node id -> the record an item of this process just put on its report as data: the
    # recorder of the same process (no xdist) takes it as it is rather than decoding the data
    handed: dict[str, ItemRecord] = field(default_factory=dict)

    def compile(self, subject: Subject, request: Callable[[], FunctionRequest], timeout: float | None, *,
                group: str | None = None, cache: bool = True, remember: bool = True) -> Response:
        """The compile of ``subject``, the one entry of every item's and ``mlir_device``'s
        compiles: what ``prefetch`` found or sent ahead, else the compile cache's verdict
        (``cache``; ``group``: the input file, whose pack the cache keeps), else the answer of
        its target's sandbox worker to ``request()`` (then kept in the cache); ``remember``ed
        for the items that build on it (``compiled_first``)."""
        ahead = self.ahead.pop(subject, None)
        if isinstance(ahead, Response):
            response = ahead
        else:
            sent = ahead or request()
            cached = self.cache().get(sent, group) if cache and ahead is None else None
            response = cached or self.device_manager(subject.target).call(sent, timeout)
            if cache and cached is None:
                self.cache().put(sent, response, group)
        if remember:
            self.compiled[subject] = response
        return response

    def compiled_first(self, subject: Subject, request: Callable[[], FunctionRequest], timeout: float | None, *,
                       group: str | None = None, cache: bool = True) -> Response:
        """The compile an item builds on: this process's, else made now (``--lf``, or xdist
        put the compile item elsewhere)."""
        known = self.compiled.get(subject)
        return known if known is not None else self.compile(subject, request, timeout, group=group, cache=cache)

    def prefetch(self, subject: Subject, request: FunctionRequest, group: str | None = None) -> None:
        """``subject``'s compile found in the compile cache now, else sent to its worker
        ahead (which compiles while pytest reports the item before): ``compile`` takes it."""
        cached = self.cache().get(request, group)
        if cached is not None:
            self.ahead[subject] = cached
        elif self.device_manager(subject.target).submit(request):
            self.ahead[subject] = request

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

            def opened(device_id: int | None, device: DeviceFacts) -> None:
                hook.pytest_mlir_device_opened(config=self.config, target=target, device_id=device_id,
                                               info=group_json(device))

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


def check_pipeline(state: RunState) -> None:
    """``--mlir-pipeline`` (or ini ``mlir_pipeline``) parsed once, before the run, in a
    sandbox worker (the pytest process loads no MLIR): a pipeline MLIR cannot parse is a
    usage error naming the unknown passes and the registered ones nearest to them, not a
    compile-error of every item. A pipeline that parsed is kept in the compile cache (its
    toolchain's folder): the next run starts no worker for it (~0.25 s of CPU, a quarter
    of a 2,000-function collection)."""
    settings = state.settings
    if not settings.pipeline or not TARGETS[settings.target].takes_pipeline:  # IREE's targets take IREE's flags
        return
    cache = state.cache()
    if cache.pipeline_parsed(settings.pipeline, settings.target):
        return
    from pytest_mlir_snippets.client import Sandbox

    sandbox = Sandbox(settings.target, settings.memory_limit)
    try:
        answer = sandbox.check_pipeline(settings.pipeline, timeout=max(60.0, settings.timeout))
    finally:
        sandbox.close()
    if answer.kind is Kind.COMPILE_ERROR:
        raise pytest.UsageError(f"--mlir-pipeline {settings.pipeline!r}: {answer.message}")
    if answer.ok:
        cache.parsed_pipeline(settings.pipeline, settings.target)


def run_state(config: pytest.Config) -> RunState:
    return config.stash[STATE]
