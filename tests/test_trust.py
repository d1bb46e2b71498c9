"""A pass tests the code (issue 40): results computed at run time, tolerances no looser than
torch.testing.assert_close's, recorded data read as it is, no compile retried into a pass,
the plugin's own lowering never a golden. Each case is sabotage: the wrong thing must fail
(or skip), the right thing pass, through real pytest runs on real MLIR."""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import numpy as np
import pytest

from pytest_mlir_snippets.golden.compare import Tolerance
from pytest_mlir_snippets.golden.inputs import TypeSpec
from pytest_mlir_snippets.protocol import CompileFacts, Golden, Kind, Options
from pytest_mlir_snippets.worker.core import Compiled, Kept, Reference, SnippetFailure
from pytest_mlir_snippets.worker.judging.judge import judge_outputs

HAS_IREE = all(importlib.util.find_spec(m) is not None for m in ("iree.compiler", "iree.runtime"))
SCALE = """
func.func @scale(%a: tensor<64xf32>) -> tensor<64xf32> {
  %0 = arith.addf %a, %a : tensor<64xf32>
  return %0 : tensor<64xf32>
}
"""
FOLDED = """
func.func @folded(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = arith.addf %c, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
# IREE's e2e convention: a barrier keeps the constant from the folder
BARRED = """
func.func @barred() {
  %c = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %b = util.optimization_barrier %c : tensor<4xi32>
  %0 = arith.addi %b, %b : tensor<4xi32>
  check.expect_eq_const(%0, dense<[2, 4, 6, 8]> : tensor<4xi32>) : tensor<4xi32>
  return
}
"""
# openxla's testdata convention: inputs from @inputs(); dynamic_pad lowers only with them constant
DYNAMIC_PAD = """
func.func private @inputs() -> (tensor<3xf32>, tensor<f32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) {
  %x = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %p = stablehlo.constant dense<0.0> : tensor<f32>
  %lo = stablehlo.constant dense<1> : tensor<1xi64>
  %hi = stablehlo.constant dense<1> : tensor<1xi64>
  %in = stablehlo.constant dense<0> : tensor<1xi64>
  return %x, %p, %lo, %hi, %in : tensor<3xf32>, tensor<f32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>
}
func.func @main() {
  %0:5 = call @inputs() : () -> (tensor<3xf32>, tensor<f32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>)
  %1 = stablehlo.dynamic_pad %0#0, %0#1, %0#2, %0#3, %0#4
      : (tensor<3xf32>, tensor<f32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<5xf32>
  %e = stablehlo.constant dense<[0.0, 1.0, 2.0, 3.0, 0.0]> : tensor<5xf32>
  stablehlo.custom_call @check.expect_eq(%1, %e) {has_side_effect = true} : (tensor<5xf32>, tensor<5xf32>) -> ()
  return
}
"""
# the StableHLO specification's convention: constants inline, the op under test between
INLINE_COMPLEX = """
func.func @add_c64() {
  %c = stablehlo.constant dense<[(1.0, 2.0), (3.0, 4.0)]> : tensor<2xcomplex<f32>>
  %0 = stablehlo.add %c, %c : tensor<2xcomplex<f32>>
  "check.expect_eq_const"(%0) <{value = dense<[(2.0, 4.0), (6.0, 8.0)]> : tensor<2xcomplex<f32>>}>
      : (tensor<2xcomplex<f32>>) -> ()
  return
}
func.func @add_ui4() {
  %c = stablehlo.constant dense<[0, 1, 2, 3]> : tensor<4xui4>
  %c_0 = stablehlo.constant dense<[1, 2, 3, 12]> : tensor<4xui4>
  %0 = stablehlo.add %c, %c_0 : tensor<4xui4>
  "check.expect_eq_const"(%0) <{value = dense<[1, 3, 5, 15]> : tensor<4xui4>}> : (tensor<4xui4>) -> ()
  return
}
func.func @add_f16_0d() {
  %c = stablehlo.constant dense<1.5> : tensor<f16>
  %0 = stablehlo.add %c, %c : tensor<f16>
  "check.expect_eq_const"(%0) <{value = dense<3.0> : tensor<f16>}> : (tensor<f16>) -> ()
  return
}
"""


def _records(pytester: pytest.Pytester, *args: str) -> dict[str, dict[str, Any]]:
    out = pytester.path / "records.json"
    pytester.runpytest("-p", "no:cacheprovider", f"--mlir-json={out}", *args)
    return {r["name"]: r for r in json.loads(out.read_text())["items"]}


def _scale_data(pytester: pytest.Pytester, factor: float, **extra: np.ndarray) -> None:
    given = (np.random.default_rng(0).normal(size=64) * 0.5e-5).astype(np.float32)
    np.savez(pytester.path / "ops.scale.npz", input_0=given, output_0=(2 * given * factor).astype(np.float32), **extra)


def test_a_2x_error_at_1e_5_scale_fails_and_says_its_rule(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=SCALE)
    _scale_data(pytester, 1.0)
    record = _records(pytester)["scale[execute]"]
    assert record["kind"] == "pass" and record["computed"] == "runtime", record["message"]
    rule = record["info"]["tolerance"]
    assert rule["rtol"] == 1.3e-6 and rule["atol"] < 1e-9 and "torch.testing" in rule["source"]
    _scale_data(pytester, 2.0)  # sabotage: every expected value twice the right one
    record = _records(pytester)["scale[execute]"]
    assert record["kind"] == "golden-mismatch" and record["golden"] == "recorded", record["message"]
    assert "outside atol" in record["message"]


def test_a_comment_line_sets_a_function_tolerance(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops="// mlir-snippets: rtol=1.5\n" + SCALE.lstrip())
    _scale_data(pytester, 2.0)
    record = _records(pytester)["scale[execute]"]
    assert record["kind"] == "pass" and record["info"]["tolerance"]["rtol"] == 1.5
    assert "mlir-snippets: rtol=1.5" in record["info"]["tolerance"]["source"]
    pytester.makefile(".mlir", ops="// mlir-snippets: rtl=1.5\n" + SCALE.lstrip())
    record = _records(pytester)["scale[execute]"]
    assert record["kind"] == "execute-error" and "'rtl=1.5' is not one of atol=N" in record["message"]


@pytest.mark.parametrize(("keys", "says"), [
    ({"input_0": 0, "result_0": 1}, "unknown key(s) result_0"),
    ({"input_0": 0, "output_0": 1, "output_2": 1}, "numbering with a gap"),
])
def test_recorded_data_that_cannot_be_read_as_it_is_is_an_error(pytester: pytest.Pytester, keys: dict[str, int],
                                                                 says: str) -> None:
    pytester.makefile(".mlir", ops=SCALE)
    given = np.ones(64, np.float32)
    np.savez(pytester.path / "ops.scale.npz", **{k: given * (1 + v) for k, v in keys.items()})
    record = _records(pytester)["scale[execute]"]
    assert record["kind"] == "execute-error" and says in record["message"], record["message"]
    assert "found" in record["message"] and record.get("golden") in (None, "")


def test_a_recorded_count_that_differs_is_an_error_naming_the_keys(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=SCALE)
    given = np.ones(64, np.float32)
    np.savez(pytester.path / "ops.scale.npz", input_0=given, output_0=given, output_1=given)
    record = _records(pytester)["scale[execute]"]
    assert record["kind"] == "execute-error" and "found output_0, output_1, expected output_0" in record["message"]


def test_a_folded_result_is_not_a_pass(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=FOLDED)
    np.savez(pytester.path / "ops.folded.npz", input_0=np.zeros(4, np.float32),
             output_0=np.array([2, 4, 6, 8], np.float32))
    record = _records(pytester)["folded[execute]"]
    assert (record["kind"], record["computed"], record["golden"]) == ("skip", "compile-time", "recorded")
    assert record["message"].startswith("computed at compile time")
    assert _records(pytester, "--mlir-require-golden")["folded[execute]"]["kind"] == "no-golden"
    np.savez(pytester.path / "ops.folded.npz", input_0=np.zeros(4, np.float32),
             output_0=np.array([2, 4, 6, 9], np.float32))  # the comparison still runs
    assert _records(pytester)["folded[execute]"]["kind"] == "golden-mismatch"


def test_a_barred_constant_is_fed_at_run_time(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=BARRED)
    record = _records(pytester)["barred[execute]"]
    assert (record["kind"], record["computed"]) == ("pass", "runtime"), record["message"]
    assert record["info"]["fed_inputs"] == ["util.optimization_barrier #1"]
    pytester.makefile(".mlir", ops=BARRED.replace("[2, 4, 6, 8]", "[2, 4, 6, 9]"))
    assert _records(pytester)["barred[execute]"]["kind"] == "golden-mismatch"


def test_inline_constants_of_every_type_reach_the_code(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=INLINE_COMPLEX)
    records = _records(pytester)
    for name in ("add_c64", "add_ui4", "add_f16_0d"):
        record = records[f"{name}[execute]"]
        assert (record["kind"], record["computed"]) == ("pass", "runtime"), (name, record["message"])
        assert record["info"]["fed_inputs"], name
    pytester.makefile(".mlir", ops=INLINE_COMPLEX.replace("(6.0, 8.0)", "(6.0, 9.0)").replace("5, 15]", "5, 14]"))
    records = _records(pytester)
    assert records["add_c64[execute]"]["kind"] == records["add_ui4[execute]"]["kind"] == "golden-mismatch"


def test_a_compile_that_lowers_only_with_inputs_constant_is_a_compile_error(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=DYNAMIC_PAD)
    records = _records(pytester)
    record = records["main[compile]"]
    assert record["kind"] == "compile-error", record["message"]
    assert "with its inputs fed at run time" in record["message"]
    assert records["main[execute]"]["outcome"] == "skipped"


def _compiled() -> Compiled:
    spec = TypeSpec("tensor", "f32", (4,))
    return Compiled("", "f", ([spec], [spec]), facts=CompileFacts(inputs=["tensor<4xf32>"], outputs=["tensor<4xf32>"]),
                    kept=Kept(runtime_results=[True]))


def test_a_reference_that_cannot_be_computed_is_no_golden_not_an_error() -> None:
    def failing() -> Reference:
        raise SnippetFailure(Kind.EXECUTE_ERROR, "the reference (cpu target) failed: it does not compile")

    x = np.ones(4, np.float32)
    executed = judge_outputs(_compiled(), Options(), None, [x], [x], failing)
    assert executed.metrics == {} and executed.verdict.golden == Golden.NONE
    assert executed.verdict.reference == "no independent golden: the reference (cpu target) failed: it does not compile"


def test_self_agreement_is_labelled_and_disagreement_fails() -> None:
    x = np.ones(4, np.float32)
    verdict = judge_outputs(_compiled(), Options(), None, [x], [x], lambda: Reference([x], "own", Golden.SELF)).verdict
    assert verdict.golden == Golden.SELF and verdict.computed == "runtime"
    with pytest.raises(SnippetFailure) as failure:
        judge_outputs(_compiled(), Options(), None, [x], [x], lambda: Reference([2 * x], "own", Golden.SELF))
    assert failure.value.kind is Kind.GOLDEN_MISMATCH and failure.value.verdict is not None
    assert failure.value.verdict.golden == Golden.SELF


def test_iree_thresholds_are_the_recorded_tests_own_rule(tmp_path: Any) -> None:
    from pytest_mlir_snippets.golden.recorded import iree_thresholds

    flags = tmp_path / "run_module_io_flags.txt"
    flags.write_text("--input=4xf32=1\n--expected_output=4xf32=1\n--expected_f32_threshold=0.5\n")
    rule = iree_thresholds(flags)
    assert isinstance(rule, Tolerance) and rule.resolve(np.dtype(np.float32), np.ones(4)) == (0.5, 0.0)
    assert rule.resolve(np.dtype(np.float16), np.ones(4)) == (1e-3, 0.0) and "iree-run-module" in rule.source


# an unpack with dynamic tiles: IREE lowers it; the cpu target's plain lowering cannot bufferize it
UNPACK = """
func.func @unpack(%a: tensor<2x2x2x2xf32>, %t: index) -> tensor<4x4xf32> {
  %in = tensor.cast %a : tensor<2x2x2x2xf32> to tensor<?x?x?x?xf32>
  %init = tensor.empty() : tensor<4x4xf32>
  %u = linalg.unpack %in inner_dims_pos = [0, 1] inner_tiles = [%t, %t] into %init
      : tensor<?x?x?x?xf32> -> tensor<4x4xf32>
  return %u : tensor<4x4xf32>
}
"""


@pytest.mark.skipif(not HAS_IREE, reason="the [iree] extra is not installed")
def test_a_reference_that_fails_is_no_independent_golden_on_iree(pytester: pytest.Pytester) -> None:
    """IREE compiles and runs it; the cpu target's plain lowering (its reference) cannot."""
    pytester.makefile(".mlir", ops=UNPACK)
    record = _records(pytester, "--mlir-target=iree-cpu")["unpack[execute]"]
    assert (record["kind"], record["golden"], record["outcome"]) == ("skip", "none", "skipped"), record["message"]
    assert record["message"].startswith("no independent golden: the reference (cpu target) failed")
    required = _records(pytester, "--mlir-target=iree-cpu", "--mlir-require-golden")["unpack[execute]"]
    assert required["kind"] == "no-golden" and "the reference (cpu target) failed" in required["message"]
