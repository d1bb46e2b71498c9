"""Windowed ONNX ops expanded by worker/lowering/onnx/ (pooling.py, col2im.py) against
ONNX's reference implementation on random inputs (seeded) over several shapes and attributes.

The installed reference is ONNX >= 1.18's; the expansions follow ONNX 1.17's (IREE's ONNX
tests) where the two differ: AveragePool's count_include_pad and LpPool over the rows
ceil_mode adds past the pads, so those cases are left out here."""

from __future__ import annotations

import numpy as np
import pytest

from onnx_cases import Case
from test_onnx_expand import assert_all_pass_on_recorded, run_cases

pytest.importorskip("onnx")
pytest.importorskip("torch_mlir")
pytestmark = pytest.mark.slow


def test_maxpool_indices_against_the_reference(pytester: pytest.Pytester, run_items) -> None:
    rng = np.random.default_rng(11)
    x2 = rng.standard_normal((2, 3, 7, 8)).astype(np.float32)
    ties = rng.integers(-3, 4, (1, 2, 6, 7)).astype(np.int8)  # repeated maxima: the first one's index
    cases = [
        Case("maxpool_pads_strides", "MaxPool", [x2], {"kernel_shape": [3, 3], "strides": [2, 2],
                                                       "pads": [1, 1, 1, 1]}, outputs=2, opset=22),
        Case("maxpool_column_major_dilated", "MaxPool", [x2], {"kernel_shape": [2, 3], "strides": [2, 1],
                                                               "dilations": [1, 2], "storage_order": 1},
             outputs=2, opset=22),
        Case("maxpool_1d_ceil", "MaxPool", [rng.standard_normal((2, 2, 10)).astype(np.float32)],
             {"kernel_shape": [3], "strides": [2], "ceil_mode": 1}, outputs=2, opset=22),
        Case("maxpool_3d_column_major", "MaxPool", [rng.standard_normal((1, 2, 5, 6, 4)).astype(np.float32)],
             {"kernel_shape": [2, 3, 2], "strides": [2, 2, 1], "storage_order": 1}, outputs=2, opset=22),
        Case("maxpool_same_upper_int8_ties", "MaxPool", [ties], {"kernel_shape": [3, 2], "strides": [2, 2],
                                                                 "auto_pad": "SAME_UPPER"}, outputs=2, opset=22),
        Case("maxpool_uint8_opset11", "MaxPool", [rng.integers(0, 255, (1, 1, 6, 6)).astype(np.uint8)],
             {"kernel_shape": [2, 2], "strides": [2, 2]}, outputs=2, opset=11),
        Case("maxpool_window_in_padding", "MaxPool", [rng.standard_normal((1, 2, 5, 5)).astype(np.float32)],
             {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [2, 0, 0, 0]}, outputs=2, opset=22),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))


def test_lppool_against_the_reference(pytester: pytest.Pytester, run_items) -> None:
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 3, 6, 7)).astype(np.float32)
    cases = [
        Case("lppool_p2_default", "LpPool", [x], {"kernel_shape": [2, 3]}, opset=18),
        Case("lppool_p3_pads_strides", "LpPool", [x], {"kernel_shape": [3, 3], "p": 3, "strides": [2, 2],
                                                       "pads": [1, 2, 1, 0]}, opset=18),
        Case("lppool_p1_dilations", "LpPool", [x], {"kernel_shape": [2, 2], "p": 1, "dilations": [2, 3]},
             opset=18),
        Case("lppool_same_lower", "LpPool", [x], {"kernel_shape": [3, 2], "strides": [2, 2],
                                                  "auto_pad": "SAME_LOWER"}, opset=18),
        Case("lppool_1d_opset11_f64", "LpPool", [rng.standard_normal((2, 2, 9))], {"kernel_shape": [4], "p": 4,
                                                                                   "strides": [2]}, opset=11),
        Case("lppool_3d_ceil_exact", "LpPool", [rng.standard_normal((1, 2, 5, 5, 4)).astype(np.float32)],
             {"kernel_shape": [3, 3, 2], "strides": [2, 2, 2], "ceil_mode": 1}, opset=18),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))


def test_averagepool_against_the_reference(pytester: pytest.Pytester, run_items) -> None:
    rng = np.random.default_rng(13)
    x = rng.standard_normal((2, 3, 9, 8)).astype(np.float32)
    cases = [
        Case("avgpool_dilated_exclude_pad", "AveragePool", [x], {"kernel_shape": [3, 2], "dilations": [2, 2],
                                                                  "pads": [1, 1, 2, 1]}, opset=19),
        Case("avgpool_dilated_include_pad", "AveragePool", [x], {"kernel_shape": [2, 3], "dilations": [3, 1],
                                                                  "strides": [2, 2], "pads": [1, 1, 1, 1],
                                                                  "count_include_pad": 1}, opset=19),
        Case("avgpool_ceil_exclude_pad", "AveragePool", [x], {"kernel_shape": [3, 3], "strides": [2, 3],
                                                               "pads": [1, 0, 0, 1], "ceil_mode": 1}, opset=19),
        Case("avgpool_1d_ceil_dilated", "AveragePool", [rng.standard_normal((1, 2, 12)).astype(np.float32)],
             {"kernel_shape": [3], "strides": [2], "dilations": [2], "ceil_mode": 1}, opset=22),
        Case("avgpool_3d_ceil_include_pad_fits", "AveragePool",
             [rng.standard_normal((1, 1, 7, 9, 5)).astype(np.float32)],
             {"kernel_shape": [3, 3, 3], "strides": [2, 3, 1], "pads": [1, 0, 1, 1, 0, 1], "ceil_mode": 1,
              "count_include_pad": 1}, opset=22),
        Case("avgpool_ceil_f64", "AveragePool", [rng.standard_normal((1, 2, 7, 7))],
             {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}, opset=11),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))


def test_col2im_against_the_reference(pytester: pytest.Pytester, run_items) -> None:
    rng = np.random.default_rng(14)

    def case(name: str, image: list[int], block: list[int], blocks: int, channels: int, **attrs: list[int]) -> Case:
        k = int(np.prod(block))
        x = rng.standard_normal((2, channels * k, blocks)).astype(np.float32)
        return Case(name, "Col2Im", [x, np.array(image, np.int64), np.array(block, np.int64)], attrs, opset=18)

    cases = [
        case("col2im_2d", [5, 6], [2, 3], 4 * 4, 3),
        case("col2im_pads_strides", [6, 7], [3, 2], 3 * 4, 2, pads=[1, 0, 1, 1], strides=[2, 2]),
        case("col2im_dilations", [7, 6], [2, 2], 4 * 1, 1, dilations=[3, 4], strides=[1, 2]),
        case("col2im_3d", [4, 5, 3], [2, 3, 2], 3 * 3 * 2, 2),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))
