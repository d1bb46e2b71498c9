"""Targets. Each module defines one ``Backend``; ``TARGETS`` names them.

Backends are imported only inside the sandbox worker, so the pytest process
never loads MLIR, torch-mlir or a device runtime.
"""

from __future__ import annotations

import importlib
from typing import Any

from pytest_mlir_snippets.registry import TARGETS as REGISTRY
from pytest_mlir_snippets.worker.targets.base import Backend, Compiled, SnippetFailure

# target name -> "module:Class" relative to the worker package, from the registry (registry.py)
TARGETS: dict[str, str] = {name: target.backend for name, target in REGISTRY.items()}
WORKER = __name__.rpartition(".")[0]


def load(spec: str) -> Any:
    """What a registry's "package.module:name" names, relative to the worker package
    (``targets.cpu:CpuBackend``, ``triage.cpu_driver:driver``), imported now."""
    module_name, name = spec.split(":")
    return getattr(importlib.import_module(f"{WORKER}.{module_name}"), name)


def load_backend(target: str) -> Backend:
    """Instantiate the backend of ``target`` (in the worker)."""
    backend: Backend = load(TARGETS[target])()
    return backend


__all__ = ["TARGETS", "Backend", "Compiled", "SnippetFailure", "load", "load_backend"]
