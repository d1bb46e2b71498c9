"""Per-process state of a run, kept in ``config.stash``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .device import DeviceManager
from .options import Settings
from .protocol import Response


@dataclass
class RunState:
    settings: Settings
    compiled: dict[str, Response] = field(default_factory=dict)  # snippet id -> compile response
    manager: DeviceManager | None = None
    kinds: dict[str, str] = field(default_factory=dict)  # node id -> outcome kind (controller side)

    def device_manager(self) -> DeviceManager:
        if self.manager is None:
            self.manager = DeviceManager(self.settings)
        return self.manager

    def close(self) -> None:
        if self.manager is not None:
            self.manager.close()


STATE = pytest.StashKey[RunState]()


def run_state(config: pytest.Config) -> RunState:
    return config.stash[STATE]


_UNSAFE = re.compile(r"[^\w.+-]+")


def safe_name(name: str) -> str:
    """A file name that stays inside its folder, whatever the symbol name."""
    cleaned = _UNSAFE.sub("_", name).strip(".") or "_"
    return cleaned[:120]


def artifact_dir(root: Path, file: Path, uid: str, target: str) -> Path:
    """``<root>/ops_mlir_snippets/<file>/<func>/<target>/``, always inside root."""
    return root / "ops_mlir_snippets" / safe_name(file.name) / safe_name(uid) / safe_name(target)
