"""StableHLO's check rules (golden/checks.py), as the reference interpreter applies them."""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import pytest

from pytest_mlir_snippets.golden.checks import Check, evaluate, judge

NAN, INF = float("nan"), float("inf")


def check(rule: str, **kw: object) -> Check:
    return Check(0, f"check.{rule}", rule, "f32", 3, 5, **kw)  # type: ignore[arg-type]


def passes(rule: str, actual: object, expected: object, dtype: object = np.float32, **kw: object) -> bool:
    return evaluate(check(rule, **kw), np.array(actual, dtype), np.array(expected, dtype)).passed


def test_eq_is_ieee_equality() -> None:
    assert passes("eq", [1.0, -0.0], [1.0, 0.0])
    assert not passes("eq", [NAN], [NAN])  # a NaN never equals
    assert not passes("eq", [1.0], [np.nextafter(np.float32(1), np.float32(2))])
    assert passes("eq", [3, -8], [3, -8], np.int8) and not passes("eq", [3], [4], np.uint16)
    assert passes("eq", [True, False], [True, False], np.bool_)
    assert not passes("eq", [1 + 2j], [1 + 2.5j], np.complex64)


def test_almost_eq_within_the_tolerance_nan_with_nan_never_infinity_with_finite() -> None:
    assert passes("almost_eq", [1.0, NAN, INF, -INF], [1.0009, NAN, INF, -INF], tolerance=1e-3)
    assert not passes("almost_eq", [1.0], [1.0011], np.float64, tolerance=1e-3)
    assert not passes("almost_eq", [NAN], [1.0], tolerance=1e-3)
    assert not passes("almost_eq", [INF], [3e38], tolerance=1e38)
    assert not passes("almost_eq", [0.0], [INF], tolerance=1e-3)
    assert passes("almost_eq", [1 + 1j], [1.00005 + 0.99995j], np.complex128, tolerance=1e-4)
    assert not passes("almost_eq", [1 + 1j], [1 + 1.1j], np.complex128, tolerance=1e-4)
    assert passes("almost_eq", [7], [7], np.int32, tolerance=1e-4)  # integers: exact


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, ml_dtypes.bfloat16])
def test_close_counts_units_in_the_last_place_of_the_type(dtype: object) -> None:
    one = np.array([1.0], dtype)
    bits = np.dtype(f"uint{one.itemsize * 8}")
    for k in range(5):  # k representable values above 1.0
        verdict = evaluate(check("close", max_ulp=3), (one.view(bits) + k).view(one.dtype), one)
        assert verdict.passed is (k <= 3) and verdict.metrics["check_0_max_ulp"] == k


def test_close_across_zero_nan_and_infinity() -> None:
    tiny = np.array([np.float32(1e-45)], np.float32)  # the smallest subnormal, 1 ULP above +0
    assert evaluate(check("close", max_ulp=3), -tiny, tiny).metrics["check_0_max_ulp"] == 2
    assert passes("close", [-0.0], [0.0], max_ulp=0)
    assert passes("close", [NAN, INF], [NAN, INF], max_ulp=0)
    assert not passes("close", [INF], [3.4e38], max_ulp=3)
    assert not passes("close", [1.0], [1.0], min_ulp=1, max_ulp=3)  # a floor as well
    a = np.array([1 + 1j], np.complex64)
    b = np.array([1 + np.nextafter(np.float32(1), np.float32(2)) * 1j], np.complex64)
    assert evaluate(check("close", max_ulp=3), a, b).metrics["check_0_max_ulp"] == 1


def test_eq_or_almost_eq_follows_the_type() -> None:
    assert passes("eq_or_almost_eq", [1.0], [1.00005], tolerance=1e-4)
    assert not passes("eq_or_almost_eq", [1], [2], np.int32, tolerance=10)


def test_verdict_names_the_first_mismatch_and_judge_collects_metrics() -> None:
    checks = [Check(0, "check.expect_eq", "eq", "i32", 7, 5, first=0),
              Check(1, "check.expect_close", "close", "f32", 9, 5, max_ulp=3, first=2)]
    results = [np.array([[1, 2], [3, 4]], np.int32), np.array([[1, 2], [3, 5]], np.int32),
               np.array([1.0, 2.0], np.float32), np.array([1.0, 2.0], np.float32)]
    metrics, failed = judge(checks, results)
    assert [v.check.index for v in failed] == [0]
    assert failed[0].message == "1 of 4 element(s) not equal; first at index [1, 1]: 4 (actual) vs 5 (expected)"
    assert metrics["check_0_mismatches"] == 1 and metrics["check_1_max_ulp"] == 0 and metrics["max_abs_err"] == 1
    shape = evaluate(checks[0], np.zeros(3, np.int32), np.zeros(4, np.int32))
    assert not shape.passed and "shape (3,) (actual) vs (4,) (expected)" in shape.message


# issue 52: a check whose two values reach it as given (no op between) checks nothing
VACUOUS = """
func.func @dead() {
  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = stablehlo.add %a, %a : tensor<2xf32>
  %e = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  stablehlo.custom_call @check.expect_eq(%a, %e) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  return
}
func.func @live() {
  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = stablehlo.add %a, %a : tensor<2xf32>
  %e = stablehlo.constant dense<[2.0, 4.0]> : tensor<2xf32>
  stablehlo.custom_call @check.expect_eq(%b, %e) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  return
}
func.func @half() {
  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = stablehlo.add %a, %a : tensor<2xf32>
  %e = stablehlo.constant dense<[2.0, 4.0]> : tensor<2xf32>
  stablehlo.custom_call @check.expect_eq(%b, %e) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  "check.expect_eq_const"(%a) <{value = dense<[1.0, 2.0]> : tensor<2xf32>}> : (tensor<2xf32>) -> ()
  return
}
func.func @barred() {
  %c = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %b = util.optimization_barrier %c : tensor<4xi32>
  check.expect_eq_const(%b, dense<[1, 2, 3, 4]> : tensor<4xi32>) : tensor<4xi32>
  return
}
func.func private @inputs() -> tensor<2xf32> {
  %x = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %x : tensor<2xf32>
}
func.func @viainputs() {
  %0 = call @inputs() : () -> tensor<2xf32>
  %1 = stablehlo.abs %0 : tensor<2xf32>
  %e = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  stablehlo.custom_call @check.expect_eq(%0, %e) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  return
}
"""


def test_a_check_of_values_as_given_does_not_count(pytester: pytest.Pytester) -> None:
    """Sabotage: the op under test left dead, a constant compared with itself, skips as
    ``nothing computed``; so does a barred constant or an ``@inputs()`` value checked as it
    came; one computed check is enough, and the record lists ``computed`` per check."""
    pytester.makefile(".mlir", ops=VACUOUS)
    out = pytester.path / "records.json"
    result = pytester.runpytest("-p", "no:cacheprovider", f"--mlir-json={out}")
    records = {r["name"]: r for r in json.loads(out.read_text())["items"]}
    for name in ("dead", "barred", "viainputs"):
        record = records[f"{name}[execute]"]
        assert (record["kind"], record["outcome"], record["computed"]) == ("skip", "skipped", "nothing"), record
        assert record["message"].startswith("nothing computed: every check compares values as given"), record
        assert [c["computed"] for c in record["info"]["checks"]] == ["nothing"], record["info"]
    dead = records["dead[execute]"]["info"]["checks"]
    assert dead == [{"check": "check.expect_eq", "line": 5, "computed": "nothing"}]
    for name in ("live", "half"):
        assert (records[f"{name}[execute]"]["kind"], records[f"{name}[execute]"]["computed"]) == ("pass", "runtime")
    assert [c["computed"] for c in records["half[execute]"]["info"]["checks"]] == ["runtime", "nothing"]
    result.stdout.fnmatch_lines(["verdicts by golden: 2 pass(es): checks 2; nothing computed: 3"])
