"""Unique (worker/lowering/onnx/unique.py) against ONNX's reference implementation on
seeded random inputs: sorted and not, without an axis, with a positive and a negative
axis, over ranks 1-4 and several element types, with repeated rows, NaN, infinities and
signed zeros, and with each prefix of the four outputs; every output must match exactly."""

from __future__ import annotations

import numpy as np
import pytest

import onnx_cases
from onnx_cases import Case
from test_onnx_expand import assert_all_pass_on_recorded, run_cases

pytest.importorskip("onnx")
pytest.importorskip("torch_mlir")
pytestmark = pytest.mark.slow


def _rows(rng: np.random.Generator, shape: tuple[int, ...], axis: int, distinct: int) -> np.ndarray:
    """Random small integers whose slices along ``axis`` repeat: ``distinct`` slices drawn
    and stacked in a random order, so that Unique along the axis finds repeats."""
    moved = (shape[axis], *shape[:axis], *shape[axis + 1:])
    pool = rng.integers(-3, 4, (distinct, *moved[1:]))
    stacked = pool[rng.integers(0, distinct, moved[0])]
    return np.moveaxis(stacked, 0, axis)


def test_unique_without_axis(pytester: pytest.Pytester, run_items) -> None:
    rng = np.random.default_rng(17)
    special = np.array([np.nan, 1.5, -0.0, np.inf, 0.0, np.nan, -np.inf, 1.5, 0.0, -2.0], np.float32)
    cases = [
        Case("u_sorted_flat", "Unique", [np.array([2, 1, 1, 3, 4, 3], np.float32)], outputs=4, opset=11),
        Case("u_not_sorted_flat", "Unique", [np.array([2, 1, 1, 3, 4, 3], np.float32)], {"sorted": 0},
             outputs=4, opset=11),
        Case("u_sorted_3d_f32", "Unique", [rng.integers(-4, 5, (2, 3, 4)).astype(np.float32)], outputs=4),
        Case("u_not_sorted_i64", "Unique", [rng.integers(-6, 6, (20,))], {"sorted": 0}, outputs=4),
        Case("u_sorted_i32_y_only", "Unique", [rng.integers(-9, 9, (17,)).astype(np.int32)], outputs=1),
        Case("u_sorted_f64_two_outputs", "Unique", [rng.integers(0, 5, (3, 5)).astype(np.float64) / 4], outputs=2),
        Case("u_not_sorted_u8_three", "Unique", [rng.integers(250, 256, (12,)).astype(np.uint8)], {"sorted": 0},
             outputs=3),
        Case("u_sorted_bool", "Unique", [rng.integers(0, 2, (7,)).astype(bool)], outputs=4),
        Case("u_sorted_nan_inf_zeros", "Unique", [special], outputs=4),
        Case("u_not_sorted_nan_inf_zeros", "Unique", [special], {"sorted": 0}, outputs=4),
        Case("u_sorted_i8_4d", "Unique", [rng.integers(-128, 128, (2, 2, 3, 2)).astype(np.int8)], outputs=4),
        Case("u_scalar", "Unique", [np.array(2.5, np.float32)], outputs=4),
        Case("u_empty", "Unique", [np.zeros((0,), np.float32)], outputs=4),
        Case("u_all_distinct_f16", "Unique", [rng.permutation(12).astype(np.float16) - 5], outputs=4),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))


def test_unique_with_axis(pytester: pytest.Pytester, run_items) -> None:
    rng = np.random.default_rng(29)
    nan_rows = np.array([[np.nan, 1], [0, 2], [np.nan, 1], [-0.0, 2], [np.inf, 0], [np.nan, 0], [1, np.nan],
                         [0, 2]], np.float32)
    cases = [
        Case("u_axis0_2d", "Unique", [np.array([[1, 0, 0], [1, 0, 0], [2, 3, 4]], np.float32)], {"axis": 0},
             outputs=4, opset=11),
        Case("u_axis1_3d_sorted", "Unique", [_rows(rng, (2, 6, 2), 1, 3).astype(np.float32)],
             {"axis": 1, "sorted": 1}, outputs=4, opset=17),
        Case("u_negative_axis", "Unique", [_rows(rng, (3, 5), 1, 3).astype(np.float32)], {"axis": -1},
             outputs=4, opset=11),
        Case("u_axis_neg3_not_sorted", "Unique", [_rows(rng, (5, 2, 3), 0, 2)], {"axis": -3, "sorted": 0},
             outputs=4),
        Case("u_axis0_3d_i32_not_sorted", "Unique", [_rows(rng, (7, 3, 2), 0, 4).astype(np.int32)],
             {"axis": 0, "sorted": 0}, outputs=4),
        Case("u_axis0_4d_f64", "Unique", [_rows(rng, (6, 2, 1, 3), 0, 3).astype(np.float64)], {"axis": 0},
             outputs=4),
        Case("u_axis3_4d_y_and_indices", "Unique", [_rows(rng, (2, 1, 2, 5), 3, 2).astype(np.float32)],
             {"axis": 3}, outputs=2),
        Case("u_axis1_all_distinct_three", "Unique", [rng.standard_normal((3, 4)).astype(np.float32)],
             {"axis": 1}, outputs=3),
        Case("u_axis0_1d_nan", "Unique", [np.array([np.nan, 2, np.nan, 1, 2, -0.0, 0.0], np.float32)],
             {"axis": 0, "sorted": 0}, outputs=4),
        Case("u_axis0_rows_nan", "Unique", [nan_rows], {"axis": 0}, outputs=4),
        Case("u_axis1_rows_nan", "Unique", [nan_rows.T.copy()], {"axis": 1}, outputs=4),
        Case("u_axis0_rows_nan_not_sorted", "Unique", [nan_rows], {"axis": 0, "sorted": 0}, outputs=4),
        Case("u_axis0_no_rows", "Unique", [np.zeros((0, 3), np.int64)], {"axis": 0}, outputs=4),
        Case("u_axis2_empty_rows", "Unique", [np.zeros((2, 0, 3), np.float32)], {"axis": 2}, outputs=4),
        Case("u_axis1_u8", "Unique", [_rows(rng, (3, 8), 1, 4).astype(np.uint8)], {"axis": 1}, outputs=4),
        Case("u_axis0_bool_rows", "Unique", [rng.integers(0, 2, (6, 2)).astype(bool)], {"axis": 0}, outputs=4),
    ]
    # an empty input: the outputs are known at compile time
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases), folded=frozenset({"u_axis2_empty_rows"}))


_reference = onnx_cases.reference_outputs


def _spec_reference(case: Case) -> list[np.ndarray]:
    """Unsorted Unique as the ONNX specification defines it: the reference's own algorithm
    (numpy's sorted unique, reordered by first occurrence) with Y taken along the axis, or
    from the flattened input without one. (onnx.reference takes Y along axis 0 of the
    unflattened input whatever the axis, and returns Y sorted when it is the only output.)"""
    x = case.inputs[0]
    assert x is not None and not case.attrs.get("sorted", 1)
    axis = case.attrs.get("axis")
    y, indices, inverse, counts = np.unique(x, True, True, True, axis=axis)
    order = np.argsort(indices)
    rank = np.argsort(order)
    indices = indices[order]
    y = np.take(x.reshape(-1) if axis is None else x, indices, axis=0 if axis is None else axis)
    outputs = [y, indices, rank[inverse.reshape(-1)], counts[order]]
    return [outputs[0], *(np.asarray(o, np.int64) for o in outputs[1:])][:case.outputs]


def test_unsorted_unique_per_specification(pytester: pytest.Pytester, run_items,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(31)
    cases = [
        Case("s_flat_2d_i64", "Unique", [rng.integers(-6, 6, (5, 4))], {"sorted": 0}, outputs=4),
        Case("s_flat_3d_f32_y_only", "Unique", [rng.integers(-3, 3, (2, 3, 2)).astype(np.float32)], {"sorted": 0}),
        Case("s_axis1_f32", "Unique", [_rows(rng, (2, 6, 2), 1, 3).astype(np.float32)], {"axis": 1, "sorted": 0},
             outputs=4),
        Case("s_axis2_i32", "Unique", [_rows(rng, (2, 3, 7), 2, 4).astype(np.int32)], {"axis": 2, "sorted": 0},
             outputs=4),
        Case("s_axis_neg1_two", "Unique", [_rows(rng, (4, 9), 1, 5).astype(np.float64)], {"axis": -1, "sorted": 0},
             outputs=2),
        Case("s_axis_neg2_three", "Unique", [_rows(rng, (2, 5, 3), 1, 2)], {"axis": -2, "sorted": 0}, outputs=3),
    ]
    monkeypatch.setattr(onnx_cases, "reference_outputs", _spec_reference)
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))
