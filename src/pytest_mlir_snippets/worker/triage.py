"""A failed execute's reproducer, by backend: the cpu target's driver module
(``targets/cpu_driver.py``), iree-cpu's commands of IREE's tools (``targets/iree_driver.py``);
none elsewhere. (``--mlir-bisect`` is each backend's ``bisect``.)"""

from __future__ import annotations

from pytest_mlir_snippets.protocol import Driver, Kind, Response
from pytest_mlir_snippets.worker.core import Compiled
from pytest_mlir_snippets.worker.targets.base import Backend


def driver(backend: Backend, compiled: Compiled, request: Driver) -> Response:
    """The reproducer of ``request``'s failed execute: the driver module on the cpu target,
    IREE's commands on iree-cpu; none elsewhere."""
    from pytest_mlir_snippets.worker.targets.cpu import CpuBackend
    from pytest_mlir_snippets.worker.targets.iree import IreeCpuBackend

    if isinstance(backend, IreeCpuBackend):
        from pytest_mlir_snippets.worker.targets.iree_driver import driver as iree_driver

        return iree_driver(backend, compiled, request)
    if isinstance(backend, CpuBackend):
        from pytest_mlir_snippets.worker.targets.cpu_driver import driver as cpu_driver

        return cpu_driver(backend, compiled, request)
    return Response(Kind.UNSUPPORTED, f"no driver module for target {backend.name}: its compiled form "
                    "is not MLIR that mlir-runner runs")
