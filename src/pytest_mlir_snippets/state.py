"""Per-process state of a run, kept in ``config.stash``."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .device import DeviceManager
from .expectations import Expectations
from .options import Settings
from .protocol import Request, Response

if TYPE_CHECKING:
    from .cache import CompileCache


@dataclass
class RunState:
    settings: Settings
    config: pytest.Config
    expectations: Expectations | None = None
    compiled: dict[str, Response] = field(default_factory=dict)  # snippet id -> compile response
    managers: dict[str, DeviceManager] = field(default_factory=dict)
    compile_cache: CompileCache | None = None  # made at first use: config.cache comes after our configure

    def compile(self, request: Request, timeout: float | None) -> Response:
        """A compile request: from the compile cache, else from the sandbox (then kept)."""
        if self.compile_cache is None:
            from .cache import CompileCache

            self.compile_cache = CompileCache(self.config, self.settings.no_cache)
        cached = self.compile_cache.get(request)
        if cached is not None:
            return cached
        response = self.device_manager().call(request, timeout)
        self.compile_cache.put(request, response)
        return response

    def device_manager(self, target: str | None = None) -> DeviceManager:
        """The sandbox and device of ``target`` (default: --mlir-target); an optimization
        run may name its own target, so a session can hold one per target."""
        target = target or self.settings.target
        if target not in self.managers:
            hook = self.config.hook

            def opened(device_id: int | None, info: dict[str, Any]) -> None:
                hook.pytest_mlir_device_opened(config=self.config, target=target, device_id=device_id, info=info)

            self.managers[target] = DeviceManager(replace(self.settings, target=target), opened)
        return self.managers[target]

    def close(self) -> None:
        for manager in self.managers.values():
            manager.close()


STATE = pytest.StashKey[RunState]()


def run_state(config: pytest.Config) -> RunState:
    return config.stash[STATE]


_UNSAFE = re.compile(r"[^\w.+-]+|\.{2,}")


def safe_name(name: str) -> str:
    """A file name that stays inside its folder, whatever the symbol name; a name
    that had to change gets a hash of the original, so two never collide."""
    cleaned = _UNSAFE.sub("_", name).strip(".")[:100]
    if cleaned == name:
        return name
    return f"{cleaned or '_'}-{hashlib.sha1(name.encode()).hexdigest()[:8]}"


def artifact_dir(root: Path, file: Path, uid: str, target: str) -> Path:
    """``<root>/ops_mlir_snippets/<file>/<func>/<target>/``, always inside root."""
    return root / "ops_mlir_snippets" / safe_name(file.name) / safe_name(uid) / safe_name(target)
