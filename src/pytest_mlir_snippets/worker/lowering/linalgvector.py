"""``-test-linalg-transform-patterns=test-linalg-to-vector-patterns`` from public parts.

Upstream's test pass (``mlir/test/lib/Dialect/Linalg/TestLinalgTransforms.cpp``,
``applyLinalgToVectorPatterns``) applies three pattern sets greedily on each function:
``CopyVectorizationPattern`` (``memref.copy``), ``populatePadOpVectorizationPatterns``
(``tensor.pad``) and ``populateConvolutionVectorizationPatterns`` (linalg
convolutions). Only the second has a public handle: the transform op
``transform.apply_patterns.linalg.pad_vectorization``, which populates exactly that set.
Where a module holds no ``memref.copy`` and no linalg op, the other two sets have
nothing to match (the pad patterns create neither), and that op, run by the transform
interpreter on each function, is the pass. Otherwise a compile-error names the flag.
"""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.protocol import Kind
from pytest_mlir_snippets.worker.core import SnippetFailure

OPTION = "test-linalg-to-vector-patterns"
SCHEDULE = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %funcs = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %funcs {
      transform.apply_patterns.linalg.pad_vectorization
    } : !transform.any_op
    transform.yield
  }
}"""


def linalg_to_vector_patterns(module: Any) -> None:
    """The test pass's pad vectorization, where its other pattern sets have nothing to match."""
    from mlir import ir
    from mlir.dialects.transform import interpreter

    from pytest_mlir_snippets.worker.lowering import mlirtools

    others = mlirtools.ops_where(module, ir, lambda op: op.name == "memref.copy" or op.name.startswith("linalg."))
    if others:
        names = ", ".join(sorted({op.name for op in others}))
        raise SnippetFailure(Kind.COMPILE_ERROR,
                             f"mlir-opt flag -test-linalg-transform-patterns={OPTION}: the plugin's equivalent "
                             f"covers tensor.pad only, and this module has {names} (upstream's test pass "
                             "vectorizes memref.copy and convolutions too, with patterns no public pass or "
                             "transform op applies alone)")
    schedule = ir.Module.parse(SCHEDULE)
    interpreter.apply_named_sequence(module.operation, schedule.body.operations[0], schedule)
