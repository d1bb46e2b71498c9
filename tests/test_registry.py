"""The target registry (``registry.py``) is the one list of targets: what reads it, and
that the backends and the dialect table agree with it."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from pytest_mlir_snippets import registry, settings
from pytest_mlir_snippets.items import litcommand
from pytest_mlir_snippets.model import layout
from pytest_mlir_snippets.worker import dialects
from pytest_mlir_snippets.worker.targets import TARGETS as BACKENDS

PYPROJECT = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text()


def test_the_cli_and_the_worker_read_the_registry() -> None:
    target = next(o for o in settings.OPTIONS if o.flag == "--mlir-target")
    assert target.choices == registry.NAMES
    assert set(BACKENDS) == set(registry.NAMES)
    assert litcommand.TARGETS == {*registry.NAMES, "*"}
    assert layout.STAGES == {"cpu": registry.CPU_RUN, "cuda": registry.CUDA_RUN}
    assert set(dialects.TAKES) == set(registry.NAMES)


@pytest.mark.parametrize("name", registry.NAMES)
def test_each_backend_is_the_target_it_is_registered_as(name: str) -> None:
    target = registry.TARGETS[name]
    module, cls = target.backend.split(":")
    backend = getattr(importlib.import_module(f"pytest_mlir_snippets.worker.targets.{module}"), cls)
    assert backend.name == name
    if target.extra:
        assert re.search(rf"^{re.escape(target.extra)} = \[", PYPROJECT, re.MULTILINE), target.extra


def test_a_package_whose_parent_is_missing_is_absent_not_an_error() -> None:
    """find_spec raises for ``iree.compiler`` where no ``iree`` is installed: the cpu target's
    choice of a second compiler and IREE's own "not installed" message must not."""
    from pytest_mlir_snippets.registry import Target

    target = Target("x", "x:X", packages=("no_such_package_here.sub", "json"))
    assert target.absent() == ["no_such_package_here.sub"]
