"""Input generation from signatures, and the golden comparison."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from pytest_mlir_snippets.golden.compare import Tolerance, compare, compare_all, pcc
from pytest_mlir_snippets.golden.inputs import DTYPES, TypeSpec, UnsupportedType, make_inputs

FEEDABLE = ["f64", "f32", "f16", "bf16", "i64", "i32", "i16", "i8", "i1", "index"]


@pytest.mark.parametrize("element", FEEDABLE)
def test_inputs_for_every_element_type(element: str) -> None:
    specs = [TypeSpec("tensor", element, (3, None)), TypeSpec("tensor", element, ()), TypeSpec("scalar", element)]
    values = make_inputs(specs, seed=7, dynamic_dim=5)
    assert [v.shape for v in values] == [(3, 5), (), ()]
    assert all(v.dtype == DTYPES[element] for v in values)
    big = make_inputs([TypeSpec("tensor", element, (4096,))], seed=7, dynamic_dim=1)[0]
    as_float = big.astype(np.float64)
    if element == "i1":
        assert set(np.unique(big)) == {False, True}
    elif element in ("f64", "f32", "f16", "bf16"):
        assert abs(as_float.mean()) < 0.1 and 0.9 < as_float.std() < 1.1  # standard normal
    else:
        assert as_float.min() == -8 and as_float.max() == 8  # small ints, both signs


def test_inputs_are_seeded() -> None:
    specs = [TypeSpec("tensor", "f32", (16,)), TypeSpec("tensor", "i32", (16,))]
    first, again, other = (make_inputs(specs, seed, 4) for seed in (1, 1, 2))
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not np.array_equal(first[0], other[0])


def test_unfeedable_types_say_why() -> None:
    with pytest.raises(UnsupportedType, match="element type f8E4M3FN cannot be fed"):
        make_inputs([TypeSpec("tensor", "f8E4M3FN", (2,))], 0, 4)
    assert str(TypeSpec("tensor", "f32", (None, 3))) == "tensor<?x3xf32>"


def test_floats_within_tolerance_pass_and_metrics_are_reported() -> None:
    expected = np.linspace(-1, 1, 100, dtype=np.float32)
    result = compare(expected + np.float32(5e-6), expected, None, None, 0.99)
    assert result.passed and result.max_abs_err == pytest.approx(5e-6, rel=0.1) and result.pcc > 0.9999
    assert result.tolerance == {"atol": 1e-5, "rtol": 1.3e-6, "ulp": 0, "source": "torch.testing.assert_close's "
                                "defaults"}
    worse = compare(expected + np.float32(5e-5), expected, None, None, 0.99)  # passed at the old 1e-4 atol
    assert not worse.passed and "max abs error 5e-05" in worse.reason and "outside atol 1e-05" in worse.reason


def test_a_small_output_twice_too_large_fails() -> None:
    """The atol meant for values near zero shrinks with the output's scale: 2x at 1e-5 fails."""
    expected = (np.random.default_rng(0).normal(size=64) * 1e-5).astype(np.float32)
    assert not compare(expected * 2, expected).passed
    assert compare(expected * np.float32(1 + 2**-22), expected).passed  # rounding still passes
    # the user's own atol is taken as it is
    assert compare(expected * 2, expected, atol=1e-4).passed


def test_f16_offset_fails_as_torch_would() -> None:
    expected = (np.random.default_rng(1).normal(size=64) * 0.05).astype(np.float16)
    shifted = expected + np.float16(0.009)
    result = compare(shifted, expected)
    assert not result.passed and result.tolerance is not None and result.tolerance["rtol"] == 1e-3


def test_an_op_allowance_in_ulp() -> None:
    expected = np.linspace(1, 2, 32).astype(np.float16)
    three_ulp = (expected.view(np.uint16) + 3).view(np.float16)
    assert not compare(three_ulp, expected).passed
    assert compare(three_ulp, expected, rule=Tolerance(ulp=4)).passed
    assert not compare(three_ulp, expected, rule=Tolerance(ulp=2)).passed


def test_low_precision_types_get_wider_default_tolerance() -> None:
    expected = np.linspace(-4, 4, 64).astype(ml_dtypes.bfloat16)
    off_by_one_ulp = (expected.astype(np.float32) * (1 + 2**-8)).astype(ml_dtypes.bfloat16)
    assert compare(off_by_one_ulp, expected, None, None, 0.99).passed
    assert not compare(off_by_one_ulp, expected, 1e-6, 1e-6, 0.99).passed  # the user's tolerance wins


def test_integers_and_booleans_must_match_exactly() -> None:
    a = np.arange(10, dtype=np.int32)
    b = a.copy()
    b[3] += 1
    result = compare(b, a, 10.0, 10.0, 0.0)
    assert not result.passed and result.reason == ("1 element(s) differ (exact match required) (first at index [3]: "
                                                   "actual 4.0, expected 3.0)")
    assert compare(np.array([True, False]), np.array([True, False]), None, None, 0.99).passed


def test_nan_positions_and_shapes() -> None:
    a = np.array([1.0, np.nan, 3.0])
    assert compare(a, a.copy(), None, None, 0.99).passed
    assert compare(np.array([1.0, 2.0, np.nan]), a, None, None, 0.99).reason == (
        "NaN positions differ (first at index [1]: actual 2.0, expected nan)")
    assert "shape (2,)" in compare(np.zeros(2), np.zeros(3), None, None, 0.99).reason


def test_pcc_and_the_worst_of_several_results() -> None:
    x = np.arange(8.0)
    assert pcc(x, 2 * x + 1) == pytest.approx(1.0)
    assert pcc(np.ones(4), np.ones(4)) == 1.0 and np.isnan(pcc(np.ones(4), np.zeros(4)))  # undefined
    worst, failures = compare_all([x, x + 1], [x, x], None, None, 0.99)
    assert not worst.passed and worst.max_abs_err == 1.0 and failures == [
        "result #1: max abs error 1, max rel error inf, PCC 1.000000; 8 element(s) outside atol 1e-07 + rtol 1e-07 x "
        "|expected| (first at index [0]: actual 1.0, expected 0.0)"]
    assert compare_all([x], [x, x], None, None, 0.99)[1] == ["1 result(s), the reference has 2"]


def test_constant_arrays_are_judged_element_by_element_and_say_their_tolerance() -> None:
    """PCC is undefined for a constant array: it neither fails a close result nor reads 0."""
    from pytest_mlir_snippets.api.assertion import assert_close
    from pytest_mlir_snippets.items.failures import GoldenMismatch

    close = np.full(8, 1.0 + 2**-23, np.float32)
    assert "pcc" not in assert_close(close, np.ones(8, np.float32))
    with pytest.raises(GoldenMismatch) as failure:
        assert_close(np.full(8, 2.0, np.float32), np.ones(8, np.float32))
    text = str(failure.value)
    assert "PCC n/a (a constant array)" in text and "PCC 0.000000" not in text
    assert "tolerance: atol 1e-05, rtol 1.3e-06, torch.testing.assert_close's defaults" in text
