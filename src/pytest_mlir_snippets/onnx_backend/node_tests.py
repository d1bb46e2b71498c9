"""ONNX's node suite as a pytest module (``mlir-snippets onnx-tests`` runs it): ONNX's own
harness, ``onnx.backend.test.BackendTest(OnnxBackend, __name__)``, node cases only (the
"real" model cases download models), on the ``_cpu`` or ``_cuda`` device of the target.

Read from the environment (the command sets them): ``MLIR_SNIPPETS_ONNX_TARGET`` (default
cpu), ``MLIR_SNIPPETS_ONNX_INCLUDE`` (a regular expression, ``-k``), and
``MLIR_SNIPPETS_ONNX_ALL`` (1: the unmatchable cases too: random outputs, strings, images).

A case whose outputs the compiler computed at compile time is skipped (the backend's
``unittest.SkipTest``); each case's output elements are its junit property ``compared``,
and a case that compared none says "0 elements compared" (a warning, in the terminal).

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import os
import unittest
import warnings
from collections.abc import Iterator

import onnx.backend.test
import pytest

from pytest_mlir_snippets import onnx_backend
from pytest_mlir_snippets.onnx_backend import (
    ALL_VARIABLE,
    INCLUDE_VARIABLE,
    OnnxBackend,
    default_target,
    device_of,
)
from pytest_mlir_snippets.onnx_backend.suite import node_cases, runnable, unmatchable

NODE = "OnnxBackendNodeModelTest"


def node_test_case(pattern: str | None = None, everything: bool = False) -> type[unittest.TestCase]:
    """The node cases of the target's device that ``pattern`` finds, as one TestCase class
    (without the harness's skipped placeholders for the cases left out)."""
    with warnings.catch_warnings():  # onnx's case generators cast out-of-range values on purpose
        warnings.simplefilter("ignore")
        backend_test = onnx.backend.test.BackendTest(OnnxBackend, __name__)
    device = device_of(default_target()).lower()
    if pattern:
        backend_test.include(pattern)
    if not everything:
        for case in node_cases():
            if unmatchable(case.name, case.model):
                backend_test.exclude(rf"^{case.name}_{device}$")
    return runnable(backend_test.test_cases[NODE], device, __name__)


ZERO_COMPARED = "0 elements compared"


class NothingCompared(UserWarning):
    """A case passed on outputs without elements: only their shapes and types were compared."""


@pytest.fixture(autouse=True)
def elements_compared(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each case's output elements (its user property ``compared``, in a junit report); a
    warning when it had none."""
    del onnx_backend.compared[:]
    yield
    if onnx_backend.compared:
        request.node.user_properties.append(("compared", sum(onnx_backend.compared)))
        if not any(onnx_backend.compared):
            warnings.warn(NothingCompared(f"{ZERO_COMPARED}: every output of the case has zero elements"),
                          stacklevel=1)


OnnxBackendNodeModelTest = node_test_case(os.environ.get(INCLUDE_VARIABLE), os.environ.get(ALL_VARIABLE) == "1")
