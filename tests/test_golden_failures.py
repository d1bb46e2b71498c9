"""A golden's failure is the golden's (issue 52): StableHLO's interpreter runs in a process
of its own, so its abort (``LLVM ERROR: Unsupported op: chlo.erf``) or hang is a golden
that could not be computed, named, and the next golden is tried; never the item's crash.
Real StableHLO as JAX exports it, through real pytest runs."""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import numpy as np
import pytest

from pytest_mlir_snippets.golden.inputs import TypeSpec
from pytest_mlir_snippets.protocol import CompileFacts, Golden, Options
from pytest_mlir_snippets.worker.core import Compiled, Kept
from pytest_mlir_snippets.worker.judging import goldens
from pytest_mlir_snippets.worker.judging.judge import judge_outputs

HAS_IREE = all(importlib.util.find_spec(m) is not None for m in ("iree.compiler", "iree.runtime"))
# ops the interpreter aborts on
UNSUPPORTED = """
func.func @erf(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = chlo.erf %a : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @lgamma(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = chlo.lgamma %a : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @top_k(%a: tensor<8xf32>) -> (tensor<3xf32>, tensor<3xi32>) {
  %v, %i = chlo.top_k(%a, k = 3) : tensor<8xf32> -> (tensor<3xf32>, tensor<3xi32>)
  return %v, %i : tensor<3xf32>, tensor<3xi32>
}
"""
OPS = {"erf": "chlo.erf", "lgamma": "chlo.lgamma", "top_k": "chlo.top_k"}


def _records(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, dict[str, Any]]]:
    out = pytester.path / "records.json"
    result = pytester.runpytest("-p", "no:cacheprovider", f"--mlir-json={out}", *args)
    return result, {r["name"]: r for r in json.loads(out.read_text())["items"]}


def test_the_interpreters_abort_is_the_goldens_not_the_items(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=UNSUPPORTED)
    result, records = _records(pytester)
    for name, op in OPS.items():
        record = records[f"{name}[execute]"]
        assert record["kind"] not in ("crash", "timeout"), (name, record["message"])
        why = f"StableHLO's interpreter aborted: Unsupported op: {op}"
        if HAS_IREE:  # the next golden in order: IREE's compiler
            assert (record["kind"], record["golden"]) == ("pass", "differential:iree-cpu"), (name, record["message"])
            assert why in record["reference"], record["reference"]
        else:  # none left: a skip naming the golden that failed
            assert (record["kind"], record["golden"]) == ("skip", "none"), (name, record["message"])
            assert why in record["message"], record["message"]
    assert "Fatal Python error" not in result.stdout.str() + result.stderr.str()


def test_with_recorded_data_the_interpreter_is_not_asked(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=UNSUPPORTED)
    given = np.array([-1.0, -0.25, 0.5, 2.0], np.float32)
    erf = np.array([-0.8427008, -0.27632639, 0.5204999, 0.9953223], np.float32)
    np.savez(pytester.path / "ops.erf.npz", input_0=given, output_0=erf)
    _, records = _records(pytester, "ops.mlir::erf")  # the others are the test above's
    record = records["erf[execute]"]
    assert (record["kind"], record["golden"], record["computed"]) == ("pass", "recorded", "runtime"), record
    np.savez(pytester.path / "ops.erf.npz", input_0=given, output_0=erf * 1.01)
    assert _records(pytester, "ops.mlir::erf")[1]["erf[execute]"]["kind"] == "golden-mismatch"


def _stub(text: str, function: str, spec: TypeSpec) -> Compiled:
    return Compiled("", function, ([spec], [spec]), facts=CompileFacts(front_end="stablehlo"),
                    kept=Kept(source=text, runtime_results=[True]))


def test_where_no_golden_is_left_the_item_skips_naming_the_one_that_failed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the interpreter declared: its abort leaves no golden; the worker lives on, and
    the interpreter's next answer comes from a process started again."""
    monkeypatch.setitem(goldens.REFERENCES, "cpu", (goldens.interpreter,))
    spec = TypeSpec("tensor", "f32", (4,))
    x = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
    found = goldens.Goldens()
    try:
        compiled = _stub(UNSUPPORTED, "erf", spec)
        executed = judge_outputs(compiled, Options(), None, [x], [x],
                                 lambda: found.reference("cpu", compiled, Options(), [x]))
        assert executed.verdict.golden is Golden.NONE
        assert executed.verdict.reference == ("no independent golden: no reference takes it: StableHLO's "
                                              "interpreter aborted: Unsupported op: chlo.erf")
        neg = """func.func @neg(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.negate %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}"""
        reference = found.reference("cpu", _stub(neg, "neg", spec), Options(), [x])
        assert reference.golden is Golden.INTERPRETER
        np.testing.assert_array_equal(reference.outputs[0], -x)
    finally:
        found.close()


def test_a_goldens_death_reads_as_the_goldens() -> None:
    from pytest_mlir_snippets.protocol import Kind, Response
    from pytest_mlir_snippets.worker.judging.goldenprocess import died

    abort = Response(Kind.CRASH, stderr="LLVM ERROR: Unsupported op: %v, %i = chlo.top_k(%arg0, k = 3) : x\n",
                     returncode=-6)
    assert died("StableHLO's interpreter", abort, 4.0) == "StableHLO's interpreter aborted: Unsupported op: chlo.top_k"
    segfault = Response(Kind.CRASH, stderr="", returncode=-11)
    assert died("PyTorch's ATen, op by op", segfault, 4.0) == "PyTorch's ATen, op by op killed by SIGSEGV"
    assert died("StableHLO's interpreter", Response(Kind.TIMEOUT), 2.5) == (
        "StableHLO's interpreter gave no outputs within 2.5 s: it was stopped")
