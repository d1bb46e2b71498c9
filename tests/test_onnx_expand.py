"""ONNX ops expanded by worker/lowering/onnx/ into ops torch-mlir converts, each against
ONNX's reference implementation on random inputs (seeded) over several shapes and attributes."""

from __future__ import annotations

import numpy as np
import pytest

from onnx_cases import Case, write_case

pytest.importorskip("onnx")
pytest.importorskip("torch_mlir")
pytestmark = pytest.mark.slow


def run_cases(pytester: pytest.Pytester, run_items, cases: list[Case]) -> dict[str, dict[str, str]]:
    for case in cases:
        write_case(pytester.path, case)
    result, props = run_items("-rA")
    executes = {k.split("::")[1]: v for k, v in props.items() if k.endswith("[execute]")}
    assert len(executes) == len(cases), result.stdout.str()
    return executes


def assert_all_pass_on_recorded(executes: dict[str, dict[str, str]], folded: frozenset[str] = frozenset()) -> None:
    """Every case passes on its recorded outputs, but those in ``folded``: their outputs do
    not depend on their inputs (a condition baked in, an empty output), so they were compared
    and skipped as computed at compile time."""
    def case(name: str) -> str:
        return name.split("[")[0]

    failed = {name: p.get("mlir_message", p["outcome"]) for name, p in executes.items() if case(name) not in folded
              and (p["outcome"] != "passed" or p.get("mlir_golden") != "recorded")}
    assert not failed, failed
    wrong = {name: (p["outcome"], p.get("mlir_computed")) for name, p in executes.items() if case(name) in folded
             and (p["outcome"] != "skipped" or p.get("mlir_computed") != "compile-time"
                  or p.get("mlir_golden") != "recorded")}
    assert not wrong, wrong


def test_dft_against_the_reference(pytester: pytest.Pytester, run_items) -> None:
    rng = np.random.default_rng(7)
    real = rng.standard_normal((2, 6, 5, 1)).astype(np.float32)
    complex_ = rng.standard_normal((3, 8, 2)).astype(np.float32)
    cases = [
        Case("dft_real_axis1", "DFT", [real], {"axis": 1}, opset=19),
        Case("dft_real_axis2_onesided", "DFT", [real], {"axis": 2, "onesided": 1}, opset=19),
        Case("dft_complex_inverse", "DFT", [complex_], {"axis": 1, "inverse": 1}, opset=19),
        Case("dft_padded_length", "DFT", [complex_, np.array(11, np.int64)], {"axis": 1}, opset=19),
        Case("dft_truncated_axis_input", "DFT", [real, np.array(4, np.int64), np.array(-3, np.int64)], opset=20),
        Case("dft_f64_default_axis", "DFT", [rng.standard_normal((4, 7, 2))], opset=20),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))


def test_wrap_pad_against_the_reference(pytester: pytest.Pytester, run_items) -> None:
    rng = np.random.default_rng(11)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    cases = [
        Case("wrap_all_axes", "Pad", [x, np.array([0, 1, 2, 0, 2, 1], np.int64)], {"mode": "wrap"}, opset=19),
        Case("wrap_longer_than_axis", "Pad", [x, np.array([0, 9, 0, 7], np.int64), None, np.array([0, 1], np.int64)],
             {"mode": "wrap"}, opset=19),
        Case("wrap_negative_axis_int", "Pad", [np.arange(12, dtype=np.int32).reshape(3, 4),
                                                np.array([3, 2], np.int64), None, np.array([-1], np.int64)],
             {"mode": "wrap"}, opset=21),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))


def test_max_unpool_against_the_reference(pytester: pytest.Pytester, run_items) -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 2, 2)).astype(np.float32)
    # indices MaxPool would give for a 2x2 kernel with stride 2 over a 4x4 plane (flattened over N, C, H, W)
    corner = rng.integers(0, 2, size=(2, 3, 2, 2, 2))
    h, w = np.arange(2)[:, None] * 2 + corner[..., 0], np.arange(2)[None, :] * 2 + corner[..., 1]
    planes = (np.arange(2)[:, None] * 3 + np.arange(3)[None, :])[:, :, None, None] * 16
    indices = (planes + h * 4 + w).astype(np.int64)
    cases = [
        Case("unpool_2d", "MaxUnpool", [x, indices], {"kernel_shape": [2, 2], "strides": [2, 2]}, opset=11),
        Case("unpool_output_shape", "MaxUnpool", [x, indices, np.array([2, 3, 5, 5], np.int64)],
             {"kernel_shape": [2, 2], "strides": [2, 2]}, opset=11),
        Case("unpool_1d_f64", "MaxUnpool", [rng.standard_normal((1, 2, 3)), np.array([[[0, 3, 5], [7, 9, 11]]])],
             {"kernel_shape": [2], "strides": [2]}, opset=22),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))


def test_training_dropout_with_a_zero_ratio_against_the_reference(pytester: pytest.Pytester, run_items) -> None:
    """A zero ratio keeps every element (the only training-mode dropout with one right answer);
    a training mode of false at run time is the identity."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    cases = [
        Case("dropout_zero_ratio_mask", "Dropout", [x, np.array(0.0, np.float32), np.array(True)], {"seed": 0},
             outputs=2, opset=22),
        Case("dropout_zero_ratio", "Dropout", [x.astype(np.float64), np.array(0.0), np.array(True)], opset=13),
        Case("dropout_not_training", "Dropout", [x, np.array(0.75, np.float32), np.array(False)], outputs=2,
             opset=22),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))


def test_an_expander_that_raises_leaves_the_op_to_torch_mlir(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """A form an expander did not foresee is torch-mlir's to convert, as it was without it."""
    from pytest_mlir_snippets.worker.lowering import frontend, onnx

    def broken(op, e):
        raise IndexError("not foreseen")

    path = write_case(tmp_path, Case("relu", "Relu", [np.ones((2, 3), np.float32)], opset=14))
    monkeypatch.setattr(onnx, "_expanders", lambda: {"Relu": broken})
    text = frontend.legalize(path.read_text(), "torch", "cpu", "relu")[0]
    assert "onnx_expansion" not in text and "torch." not in text and "linalg.generic" in text


def test_indexing_forms_against_the_reference(pytester: pytest.Pytester, run_items) -> None:
    """Slice with negative steps, ScatterElements with max/min (repeated targets, negative
    indices), Det (a zero pivot, a singular matrix, batches)."""
    rng = np.random.default_rng(13)
    x = rng.standard_normal((6, 5, 4)).astype(np.float32)
    i64 = np.int64
    data = rng.standard_normal((3, 4)).astype(np.float32)
    indices = np.array([[0, 1, -1, 1], [2, 2, 0, -3]], i64)
    updates = rng.standard_normal((2, 4)).astype(np.float32)
    cases = [
        Case("slice_neg_steps", "Slice", [x, np.array([-1, 4, 3], i64), np.array([-100, 0, -5], i64),
                                          np.array([0, 1, 2], i64), np.array([-1, -2, -1], i64)], opset=13),
        Case("slice_mixed_steps", "Slice", [x, np.array([1, 10], i64), np.array([5, -10], i64),
                                            np.array([-1, 0], i64), np.array([2, -3], i64)], opset=13),
        Case("scatter_max_axis0", "ScatterElements", [data, indices % 3, updates],
             {"axis": 0, "reduction": "max"}, opset=18),
        Case("scatter_min_axis1", "ScatterElements", [data.T.copy(), (indices.T % 3), updates.T.copy()],
             {"axis": 1, "reduction": "min"}, opset=18),
        Case("scatter_max_negative_int", "ScatterElements",
             [np.arange(12, dtype=np.int32).reshape(3, 4), np.array([[-1, 0, 1, -2]], i64),
              np.array([[50, -5, 7, 100]], np.int32)], {"axis": 1, "reduction": "max"}, opset=18),
        Case("scatter_max_uint8_zeros", "ScatterElements",
             [np.zeros((2, 3), np.uint8), np.array([[0, 1, 2]], i64), np.zeros((1, 3), np.uint8)],
             {"axis": 1, "reduction": "max"}, opset=18),
        Case("scatter_max_int8_lowest", "ScatterElements", [np.full((1, 3), -128, np.int8), np.array([[2, 1, 0]], i64),
                                                            np.full((1, 3), -128, np.int8)],
             {"axis": 1, "reduction": "max"}, opset=18),
        Case("scatter_min_f16_inf", "ScatterElements", [np.full((1, 3), np.inf, np.float16), np.array([[0, 1, 2]], i64),
                                                        np.array([[np.inf, 1, -np.inf]], np.float16)],
             {"axis": 1, "reduction": "min"}, opset=18),
        Case("det_2d", "Det", [rng.standard_normal((3, 3)).astype(np.float32)], opset=11),
        Case("det_needs_pivoting", "Det", [np.array([[0.0, 2, 1], [3, 0, 4], [1, 5, 0]], np.float32)], opset=11),
        Case("det_batched_singular", "Det", [np.stack([np.array([[1.0, 2], [2, 4]]),
                                                       rng.standard_normal((2, 2))])[None]], opset=22),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))


def test_conv_transpose_padding_torch_mlir_rejects_against_the_reference(pytester: pytest.Pytester,
                                                                         run_items) -> None:
    """SAME auto_pad (upper and lower, with output_padding) and pads that differ at the two ends."""
    rng = np.random.default_rng(17)
    x = rng.standard_normal((1, 2, 3, 4)).astype(np.float32)
    w = rng.standard_normal((2, 3, 3, 2)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    cases = [
        Case("convt_same_upper", "ConvTranspose", [x, w], {"auto_pad": "SAME_UPPER", "strides": [2, 2]}),
        Case("convt_same_lower_bias", "ConvTranspose", [x, w, b], {"auto_pad": "SAME_LOWER", "strides": [2, 2],
                                                                  "output_padding": [1, 0]}),
        Case("convt_asymmetric_pads", "ConvTranspose", [x, w, b], {"pads": [1, 0, 0, 2], "strides": [2, 1],
                                                                  "dilations": [1, 2]}),
        Case("convt_pads_output_padding", "ConvTranspose", [x, w], {"pads": [0, 1, 1, 0], "strides": [3, 2],
                                                                   "output_padding": [2, 1]}),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))
