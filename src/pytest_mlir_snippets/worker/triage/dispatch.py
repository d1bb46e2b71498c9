"""A failed execute's reproducer and ``--mlir-bisect``, as each target declares them
(``registry.Target.reproducer`` and ``bisection``): the cpu target's driver module
(``worker/triage/cpu_driver.py``; its bisection is the backend's own), iree-cpu's commands of
IREE's tools (``worker/triage/iree_driver.py``) and cuts by ``--compile-to`` phase
(``worker/triage/iree_bisect.py``)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from pytest_mlir_snippets.protocol import Bisect, Driver, Kind, Response, Triage
from pytest_mlir_snippets.registry import TARGETS
from pytest_mlir_snippets.worker.core import Compiled
from pytest_mlir_snippets.worker.targets import load
from pytest_mlir_snippets.worker.targets.base import Backend


def driver(target: str, backend: Backend, compiled: Compiled, request: Driver) -> Response:
    """The reproducer of ``request``'s failed execute, by the target's own writer; none where
    it declares none."""
    writer = TARGETS[target].reproducer
    if not writer:
        return Response(Kind.UNSUPPORTED, f"no driver module for target {target}: its compiled form "
                        "is not MLIR that mlir-runner runs")
    response: Response = load(writer)(backend, compiled, request)
    return response


def bisect(target: str, backend: Backend, request: Bisect, constants: Mapping[int, np.ndarray]) -> Triage:
    """``request``'s golden-mismatch bisected: by the target's declared bisection, else by its
    backend's ``bisect``."""
    declared = TARGETS[target].bisection
    if not declared:
        return backend.bisect(request.module, request.function, request.options, request.recorded, constants)
    found: Triage = load(declared)(backend, request.module, request.function, request.options, request.recorded)
    return found
