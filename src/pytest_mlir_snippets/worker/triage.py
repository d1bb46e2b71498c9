"""A failed execute's reproducer and ``--mlir-bisect``, by target: the cpu target's driver
module (``targets/cpu_driver.py``; its bisection is the backend's own), iree-cpu's commands
of IREE's tools (``targets/iree_driver.py``) and cuts by ``--compile-to`` phase
(``targets/iree_bisect.py``)."""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.protocol import Kind, Request, Response
from pytest_mlir_snippets.worker.core import Compiled
from pytest_mlir_snippets.worker.targets.base import Backend


def driver(target: str, backend: Backend, compiled: Compiled, request: Request) -> Response:
    """The reproducer of ``request``'s failed execute: the driver module on the cpu target,
    IREE's commands on iree-cpu; none elsewhere."""
    if target == "iree-cpu":
        from pytest_mlir_snippets.worker.targets.iree import IreeBackend
        from pytest_mlir_snippets.worker.targets.iree_driver import driver as iree_driver

        assert isinstance(backend, IreeBackend)
        return iree_driver(backend, compiled, request)
    if target != "cpu":
        return Response(Kind.UNSUPPORTED, f"no driver module for target {target}: its compiled form "
                        "is not MLIR that mlir-runner runs")
    from pytest_mlir_snippets.worker.targets.cpu import CpuBackend
    from pytest_mlir_snippets.worker.targets.cpu_driver import driver as cpu_driver

    assert isinstance(backend, CpuBackend)
    return cpu_driver(backend, compiled, request)


def iree_bisect(backend: Backend, request: Request) -> dict[str, Any]:
    """iree-cpu's bisection of ``request``'s golden-mismatch, by phase."""
    from pytest_mlir_snippets.worker.targets.iree import IreeBackend
    from pytest_mlir_snippets.worker.targets.iree_bisect import bisect

    assert isinstance(backend, IreeBackend)
    return bisect(backend, request.module, request.function, request.options, request.golden)
