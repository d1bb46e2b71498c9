"""Resize and AffineGrid expanded by worker/lowering/onnx/ (resize.py, affine.py), each against
ONNX's reference implementation on seeded random inputs over shapes, opsets, dtypes and attributes."""

from __future__ import annotations

import numpy as np
import pytest

from onnx_cases import Case
from test_onnx_expand import assert_all_pass_on_recorded, run_cases

pytest.importorskip("onnx")
pytest.importorskip("torch_mlir")
pytestmark = pytest.mark.slow

F32 = np.float32


def _scales(*values: float) -> np.ndarray:
    return np.array(values, F32)


def _sizes(*values: int) -> np.ndarray:
    return np.array(values, np.int64)


def test_resize_against_the_reference(pytester: pytest.Pytester, run_items) -> None:
    rng = np.random.default_rng(11)
    x = rng.standard_normal((1, 2, 5, 7)).astype(F32)
    small = rng.standard_normal((2, 3, 4)).astype(F32)
    image = rng.integers(0, 256, (1, 1, 6, 5)).astype(np.uint8)
    none = None
    cases = [
        # nearest: each nearest_mode, scales up and down, several coordinate transformations
        Case("nearest_half_pixel_up", "Resize", [x, none, _scales(1, 1, 2.5, 1.5)], opset=19),
        Case("nearest_prefer_ceil_asym", "Resize", [x, none, _scales(1, 1, 1.7, 0.6)],
             {"nearest_mode": "round_prefer_ceil", "coordinate_transformation_mode": "asymmetric"}, opset=19),
        Case("nearest_floor_align", "Resize", [x, none, none, _sizes(1, 2, 9, 4)],
             {"nearest_mode": "floor", "coordinate_transformation_mode": "align_corners"}, opset=19),
        Case("nearest_ceil_pytorch_one", "Resize", [x, none, none, _sizes(1, 2, 1, 10)],
             {"nearest_mode": "ceil", "coordinate_transformation_mode": "pytorch_half_pixel"}, opset=19),
        Case("nearest_floor_exclude", "Resize", [x, none, _scales(1, 1, 2, 3)],
             {"nearest_mode": "floor", "exclude_outside": 1}, opset=19),
        Case("nearest_int32_rank3", "Resize", [rng.integers(-9, 9, (2, 3, 4)).astype(np.int32), none,
                                               _scales(1, 2.0, 0.75)], opset=13),
        # linear: every coordinate transformation, scales and sizes
        Case("linear_half_pixel", "Resize", [x, none, _scales(1, 1, 0.6, 1.8)], {"mode": "linear"}, opset=19),
        Case("linear_align_corners_down", "Resize", [x, none, _scales(1, 1, 0.7, 0.45)],
             {"mode": "linear", "coordinate_transformation_mode": "align_corners"}, opset=19),
        Case("linear_asymmetric", "Resize", [x, none, none, _sizes(1, 2, 8, 3)],
             {"mode": "linear", "coordinate_transformation_mode": "asymmetric"}, opset=19),
        Case("linear_pytorch_half_pixel", "Resize", [x, none, _scales(1, 1, 0.2, 1.4)],
             {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"}, opset=19),
        Case("linear_half_pixel_symmetric", "Resize", [x, none, _scales(1, 1, 1.3, 0.55)],
             {"mode": "linear", "coordinate_transformation_mode": "half_pixel_symmetric"}, opset=19),
        Case("linear_uint8", "Resize", [image, none, _scales(1, 1, 1.5, 0.8)], {"mode": "linear"}, opset=19),
        Case("linear_f64_axes", "Resize", [rng.standard_normal((3, 4, 5)), none, _scales(2.2, 0.5)],
             {"mode": "linear", "axes": [2, 0]}, opset=19),
        # cubic: coefficient, exclude_outside
        Case("cubic_half_pixel", "Resize", [x, none, _scales(1, 1, 1.6, 0.9)], {"mode": "cubic"}, opset=19),
        Case("cubic_a_exclude", "Resize", [x, none, none, _sizes(1, 2, 3, 11)],
             {"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1}, opset=19),
        Case("cubic_align_corners_up", "Resize", [small, none, _scales(1, 1.5, 2.0)],
             {"mode": "cubic", "coordinate_transformation_mode": "align_corners"}, opset=13),
        # antialias (downsampling widens the filter), linear and cubic
        Case("antialias_linear", "Resize", [x, none, none, _sizes(1, 2, 2, 3)],
             {"mode": "linear", "antialias": 1}, opset=19),
        Case("antialias_cubic_scales", "Resize", [x, none, _scales(1, 1, 0.45, 1.3)],
             {"mode": "cubic", "antialias": 1, "exclude_outside": 1}, opset=19),
        # axes and keep_aspect_ratio_policy
        Case("sizes_not_larger", "Resize", [x, none, none, _sizes(3, 12)],
             {"axes": [2, 3], "keep_aspect_ratio_policy": "not_larger", "mode": "linear"}, opset=19),
        Case("sizes_not_smaller", "Resize", [x, none, none, _sizes(3, 3)],
             {"axes": [3, 2], "keep_aspect_ratio_policy": "not_smaller"}, opset=19),
        # tf_crop_and_resize: roi, extrapolation_value
        Case("tf_crop_linear", "Resize", [x, np.array([0, 0, 0.1, -0.2, 1, 1, 0.8, 1.3], F32), none,
                                          _sizes(1, 2, 4, 6)],
             {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize",
              "extrapolation_value": 7.5}, opset=19),
        Case("tf_crop_nearest_axes", "Resize", [x, np.array([0.3, -0.1, 0.9, 0.7], F32), none, _sizes(5, 1)],
             {"coordinate_transformation_mode": "tf_crop_and_resize", "axes": [2, 3]}, opset=19),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))


def test_affine_grid_against_the_reference(pytester: pytest.Pytester, run_items) -> None:
    rng = np.random.default_rng(5)
    theta2 = rng.standard_normal((3, 2, 3)).astype(F32)
    theta3 = rng.standard_normal((2, 3, 4)).astype(F32)
    cases = [
        Case("affine_2d", "AffineGrid", [theta2, _sizes(3, 1, 4, 7)], opset=20),
        Case("affine_2d_align", "AffineGrid", [theta2, _sizes(3, 2, 5, 1)], {"align_corners": 1}, opset=20),
        Case("affine_3d", "AffineGrid", [theta3, _sizes(2, 1, 3, 4, 5)], opset=20),
        Case("affine_3d_align", "AffineGrid", [theta3, _sizes(2, 1, 2, 6, 3)], {"align_corners": 1}, opset=20),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))


def test_resize_in_older_opsets(pytester: pytest.Pytester, run_items) -> None:
    """Opsets 11 and 12 (roi and scales always inputs, scales empty where sizes are given),
    where torch-mlir converts neither Floor nor Less, and integer rounding."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 2, 5, 7)).astype(F32)
    image = rng.integers(0, 256, (1, 1, 6, 5)).astype(np.uint8)
    cases = [
        Case("opset11_sizes_cubic", "Resize", [x, np.zeros(0, F32), np.zeros(0, F32), _sizes(1, 2, 3, 9)],
             {"mode": "cubic"}, opset=11),
        Case("opset11_scales_tf_crop", "Resize", [x, np.array([0, 0, 0.2, 0.1, 1, 1, 0.9, 0.7], F32),
                                                  _scales(1, 1, 1.4, 0.6)],
             {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize"}, opset=11),
        Case("opset12_nearest_ceil", "Resize", [x, np.zeros(0, F32), _scales(1, 1, 0.7, 2.3)],
             {"nearest_mode": "ceil", "coordinate_transformation_mode": "asymmetric"}, opset=12),
        Case("opset11_uint8_linear", "Resize", [image, np.zeros(0, F32), _scales(1, 1, 1.5, 0.8)],
             {"mode": "linear", "coordinate_transformation_mode": "align_corners"}, opset=11),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))
