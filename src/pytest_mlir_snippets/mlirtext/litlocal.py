"""Upstream's per-folder ``lit.local.cfg`` files, applied as lit applies them.

MLIR's integration test folders mark themselves unsupported where the machine or the
build lacks something (``if not config.mlir_run_amx_tests: config.unsupported = True``)
and add substitutions and features. lit runs every ``lit.local.cfg`` from the suite's
root (the folder with ``lit.cfg.py``) down to the test's folder; so does this, with a
``config`` that has this machine's features and answers False for every build option
it does not know (``mlir_run_amx_tests``, ``mlir_run_arm_sve_tests``, ...): tests that
need a build option are unsupported here, as on a build without it. A file that fails
to run is reported and skipped over.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import functools
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NAME = "lit.local.cfg"
SUITE_ROOTS = ("lit.cfg.py", "lit.site.cfg.py", "lit.cfg")


class _Config:
    """The part of lit's ``TestingConfig`` local configs use; unknown options are False."""

    def __init__(self, features: frozenset[str]) -> None:
        self.available_features: set[str] = set(features)
        self.substitutions: list[tuple[str, str]] = []
        self.unsupported = False
        self.environment: dict[str, str] = {}
        self.suffixes: set[str] = {".mlir"}
        self.excludes: list[str] = []
        self.root = self
        self.host_arch = platform.machine()
        self.host_os = platform.system()
        self.target_triple = f"{platform.machine()}-unknown-linux-gnu"
        self.shlibext = ".so"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return False  # a build option this machine's wheels were not built with


class _LitConfig:
    params: dict[str, str] = {}  # noqa: RUF012 - read only

    def note(self, message: str) -> None:
        pass

    warning = note

    def fatal(self, message: str) -> None:
        raise RuntimeError(message)


@dataclass
class LocalConfig:
    unsupported: str = ""  # the lit.local.cfg that marks the folder unsupported
    substitutions: list[tuple[str, str]] = field(default_factory=list)
    features: frozenset[str] = frozenset()
    problems: list[str] = field(default_factory=list)


def local_config(test: Path, features: frozenset[str]) -> LocalConfig:
    return _local_config(test.resolve().parent, features)


@functools.cache
def _local_config(folder: Path, features: frozenset[str]) -> LocalConfig:
    files = []
    for parent in (folder, *folder.parents):
        if (parent / NAME).is_file():
            files.append(parent / NAME)
        if any((parent / root).is_file() for root in SUITE_ROOTS):
            break
    config, result = _Config(features), LocalConfig()
    for path in reversed(files):  # the suite's root first
        try:
            code = compile(path.read_text(), str(path), "exec")
            exec(code, {"config": config, "lit_config": _LitConfig(), "__file__": str(path)})
        except Exception as error:  # a config for another lit or another build: lit would stop there too
            result.problems.append(f"{path}: {type(error).__name__}: {error}")
            result.unsupported = result.unsupported or f"{path} (it does not run here: {type(error).__name__})"
            continue
        if config.unsupported and not result.unsupported:
            result.unsupported = str(path)
    result.substitutions = [(str(a), str(b)) for a, b in config.substitutions]
    result.features = frozenset(config.available_features)
    return result
