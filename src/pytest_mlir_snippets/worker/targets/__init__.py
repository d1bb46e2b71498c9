"""Targets. Each module defines one ``Backend``; ``TARGETS`` names them.

Backends are imported only inside the sandbox worker, so the pytest process
never loads MLIR, torch-mlir or a device runtime.
"""

from __future__ import annotations

import importlib
from typing import Any

from pytest_mlir_snippets.registry import TARGETS as REGISTRY
from pytest_mlir_snippets.worker.targets.base import Backend, Compiled, SnippetFailure

# target name -> "module:Class" relative to this package, from the registry (registry.py)
TARGETS: dict[str, str] = {name: target.backend for name, target in REGISTRY.items()}


def load(spec: str) -> Any:
    """What a registry's "module:name" names, relative to this package, imported now."""
    module_name, name = spec.split(":")
    return getattr(importlib.import_module(f"{__name__}.{module_name}"), name)


def load_backend(target: str) -> Backend:
    """Instantiate the backend of ``target`` (in the worker)."""
    backend: Backend = load(TARGETS[target])()
    return backend


__all__ = ["TARGETS", "Backend", "Compiled", "SnippetFailure", "load", "load_backend"]
