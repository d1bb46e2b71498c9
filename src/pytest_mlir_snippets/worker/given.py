"""Inputs a Python test gives ``mlir_device.run``, checked against the entry's signature
(count, element type, shape) as recorded inputs are, and put in its element types; and
the seeded inputs an execute is given, for ``mlir-snippets record-goldens`` (``seeded``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.golden.inputs import TypeSpec, UnsupportedType
from pytest_mlir_snippets.protocol import FunctionRequest, Kind, Response
from pytest_mlir_snippets.worker.core import Compiled, SnippetFailure
from pytest_mlir_snippets.worker.judging.judge import recorded, run_inputs


def given(values: list[Any], specs: list[TypeSpec]) -> list[np.ndarray]:
    """``values`` as the entry's arguments: Python numbers and lists take the argument's
    element type; numpy arrays must have it (a float64 array for an f32 argument is an
    ``execute-error`` naming both, not a silent cast)."""
    try:
        values = [v if isinstance(v, np.ndarray) or i >= len(specs) else np.asarray(v, specs[i].dtype)
                  for i, v in enumerate(values)]
        return recorded(values, specs, "input")
    except UnsupportedType as error:
        raise SnippetFailure(Kind.UNSUPPORTED, str(error)) from None
    except SnippetFailure as failure:  # recorded()'s words are about recorded data
        failure.message = failure.message.replace("recorded input", "given input")
        failure.args = (failure.message,)
        raise


def seeded(compiled: Compiled, request: FunctionRequest) -> Response:
    """The answer to an ``Inputs`` request: the seeded inputs an execute of ``compiled`` is given."""
    return Response(Kind.PASS, values=run_inputs(compiled, request.options, None))
