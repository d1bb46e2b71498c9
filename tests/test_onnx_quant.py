"""The quantization expansions (QuantizeLinear, DequantizeLinear, QLinearMatMul) and grouped
ConvTranspose and Compress, each against ONNX's reference implementation on seeded random
inputs over shapes, types, opsets and attributes; integer outputs must match exactly."""

from __future__ import annotations

import numpy as np
import pytest

import onnx_cases
from onnx_cases import Case
from test_onnx_expand import assert_all_pass_on_recorded, run_cases

pytest.importorskip("onnx")
pytest.importorskip("torch_mlir")
pytestmark = pytest.mark.slow

INT8, INT16 = 3, 5  # ONNX TensorProto types (output_dtype)
FLOAT16 = 10


def _ties(rng: np.random.Generator, shape: tuple[int, ...], scale: float, span: int) -> np.ndarray:
    """Values whose quotient by ``scale`` (a power of two) is a whole or half integer in
    [-span, span]: ties that round half to even, and values past the types' ranges."""
    return (rng.integers(-2 * span, 2 * span + 1, shape) / 2 * scale).astype(np.float32)


def test_quantize_linear(pytester: pytest.Pytester, run_items) -> None:
    rng = np.random.default_rng(11)
    x34 = _ties(rng, (3, 4), 0.5, 200)
    x234 = rng.uniform(-40, 40, (2, 3, 4)).astype(np.float32)
    x25 = _ties(rng, (2, 5), 0.25, 300)
    wide = rng.uniform(-1000, 70000, (12,)).astype(np.float32)
    cases = [
        Case("q_tensor_u8", "QuantizeLinear", [x34, np.array(0.5, np.float32), np.array(128, np.uint8)]),
        Case("q_tensor_i8_one_element", "QuantizeLinear", [x34, np.array([0.5], np.float32), np.array([-3], np.int8)]),
        Case("q_no_zero_point_u8", "QuantizeLinear", [x34, np.array(0.25, np.float32)]),
        Case("q_output_dtype_i8", "QuantizeLinear", [x34, np.array(0.5, np.float32)], {"output_dtype": INT8}),
        Case("q_axis1_i8", "QuantizeLinear", [x234, np.array([0.1, 0.3, 0.7], np.float32),
                                              np.array([-5, 0, 9], np.int8)], {"axis": 1}),
        Case("q_axis_neg1_u8", "QuantizeLinear", [x234, rng.uniform(0.05, 0.5, 4).astype(np.float32),
                                                  np.array([0, 10, 128, 250], np.uint8)], {"axis": -1}),
        Case("q_blocked_axis1_u8", "QuantizeLinear", [x34, rng.uniform(0.5, 2, (3, 2)).astype(np.float32),
                                                      rng.integers(0, 256, (3, 2)).astype(np.uint8)],
             {"axis": 1, "block_size": 2}),
        Case("q_blocked_remainder_i8", "QuantizeLinear", [x25, np.array([[0.25, 0.5, 1.0]] * 2, np.float32),
                                                          np.array([[1, -2, 3], [0, 5, -7]], np.int8)],
             {"axis": 1, "block_size": 2}),
        Case("q_blocked_axis0_i16", "QuantizeLinear", [x25 * 300, np.array([[0.5] * 5], np.float32),
                                                       np.array([[7, -9, 0, 1, 2]], np.int16)],
             {"axis": 0, "block_size": 3}),
        Case("q_u16", "QuantizeLinear", [wide, np.array(1.0, np.float32), np.array(40000, np.uint16)]),
        Case("q_u16_axis0", "QuantizeLinear", [wide.reshape(3, 4), np.array([0.5, 1, 2], np.float32),
                                               np.array([0, 32768, 65535], np.uint16)], {"axis": 0}),
        Case("q_i16_output_dtype", "QuantizeLinear", [wide, np.array(2.0, np.float32)], {"output_dtype": INT16}),
        Case("q_f16", "QuantizeLinear", [x234.astype(np.float16), np.array(0.3, np.float16), np.array(3, np.int8)]),
        Case("q_opset19_saturate", "QuantizeLinear", [x34, np.array(0.5, np.float32), np.array(-1, np.int8)],
             {"saturate": 1}, opset=19),
        Case("q_opset13_axis0", "QuantizeLinear", [x34, np.array([0.5, 1.0, 2.0], np.float32),
                                                   np.array([0, 1, 2], np.uint8)], {"axis": 0}, opset=13),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))


def test_dequantize_linear(pytester: pytest.Pytester, run_items) -> None:
    rng = np.random.default_rng(12)
    u8 = rng.integers(0, 256, (3, 4)).astype(np.uint8)
    i8 = rng.integers(-128, 128, (5, 2)).astype(np.int8)
    i16 = rng.integers(-32768, 32768, (2, 3, 4)).astype(np.int16)
    u16 = rng.integers(0, 65536, (12,)).astype(np.uint16)
    i32 = rng.integers(-2**31, 2**31, (6,)).astype(np.int32)
    cases = [
        Case("dq_blocked_axis1_u8", "DequantizeLinear", [u8, rng.uniform(0.1, 2, (3, 2)).astype(np.float32),
                                                         rng.integers(0, 256, (3, 2)).astype(np.uint8)],
             {"axis": 1, "block_size": 2}),
        Case("dq_blocked_remainder_axis0_i8", "DequantizeLinear",
             [i8, rng.uniform(0.1, 2, (2, 2)).astype(np.float32), np.array([[3, -4], [0, 127]], np.int8)],
             {"axis": 0, "block_size": 3}),
        Case("dq_blocked_no_zero_point", "DequantizeLinear", [u8, rng.uniform(0.1, 2, (1, 4)).astype(np.float32)],
             {"axis": 0, "block_size": 3}),
        Case("dq_axis1_i16", "DequantizeLinear", [i16, np.array([0.01, 0.5, 3], np.float32),
                                                  np.array([-100, 0, 32767], np.int16)]),
        Case("dq_u16_f16_scale", "DequantizeLinear", [u16, np.array(0.001, np.float16), np.array(30000, np.uint16)]),
        Case("dq_i32", "DequantizeLinear", [i32, np.array(1e-3, np.float32)]),
        Case("dq_i32_zero_point", "DequantizeLinear", [i32, np.array(0.37, np.float32), np.array(12345, np.int32)]),
        Case("dq_opset19_axis0", "DequantizeLinear", [u8, np.array([0.5, 0.25, 2], np.float32),
                                                      np.array([1, 128, 255], np.uint8)], {"axis": 0}, opset=19),
        Case("dq_opset23_output_dtype", "DequantizeLinear", [i8, np.array(0.7, np.float32), np.array(-3, np.int8)],
             {"output_dtype": FLOAT16}, opset=23),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))


def test_qlinear_matmul(pytester: pytest.Pytester, run_items) -> None:
    rng = np.random.default_rng(13)

    def case(name: str, a_shape: tuple[int, ...], b_shape: tuple[int, ...], q: type, f: type,
             opset: int = 21) -> Case:
        info = np.iinfo(q)
        a = rng.integers(info.min, int(info.max) + 1, a_shape).astype(q)
        b = rng.integers(info.min, int(info.max) + 1, b_shape).astype(q)

        def zero() -> np.ndarray:
            return np.array([rng.integers(info.min, int(info.max) + 1)], q)

        scales = [np.array([s], f) for s in rng.uniform(0.002, 0.02, 3)]
        return Case(name, "QLinearMatMul", [a, scales[0], zero(), b, scales[1], zero(), scales[2], zero()],
                    opset=opset)

    cases = [
        case("qmm_2d_u8_f32", (3, 5), (5, 4), np.uint8, np.float32),
        case("qmm_2d_i8_f16", (2, 6), (6, 3), np.int8, np.float16),
        case("qmm_3d_i8_f32", (2, 3, 4), (2, 4, 5), np.int8, np.float32),
        case("qmm_batch_broadcast_u8_f16", (2, 3, 4), (4, 2), np.uint8, np.float16),
        case("qmm_opset10_u8", (4, 4), (4, 4), np.uint8, np.float32, opset=10),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))


def _grouped_reference(case: Case) -> list[np.ndarray]:
    """Grouped ConvTranspose as the ONNX specification defines it: input channels and W's rows
    split into ``group`` parts, each part transposed-convolved by the reference's ungrouped
    ConvTranspose, the outputs concatenated along the channels. (onnx.reference's own grouped
    path slices W by output channels, adds B[0] to every group and keeps one channel per group,
    right only where every group has one input and one output channel and there is no bias.)"""
    x, w, *bias = case.inputs
    assert x is not None and w is not None
    group = case.attrs["group"]
    attrs = {k: v for k, v in case.attrs.items() if k != "group"}
    per_in, per_out = x.shape[1] // group, w.shape[1]
    outputs = []
    for g in range(group):
        inputs = [x[:, g * per_in:(g + 1) * per_in], w[g * per_in:(g + 1) * per_in]]
        inputs += [b[g * per_out:(g + 1) * per_out] for b in bias if b is not None]
        outputs.append(_reference(Case(case.name, "ConvTranspose", inputs, attrs, opset=case.opset))[0])
    return [np.concatenate(outputs, axis=1)]


_reference = onnx_cases.reference_outputs


def test_grouped_conv_transpose(pytester: pytest.Pytester, run_items, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(14)

    def f32(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(np.float32)

    cases = [
        Case("ct_group2_bias_strides", "ConvTranspose", [f32(1, 4, 3, 3), f32(4, 3, 3, 2), f32(6)],
             {"group": 2, "strides": [2, 1], "pads": [1, 0, 1, 0]}),
        Case("ct_group3_1d_dilations", "ConvTranspose", [f32(2, 6, 5), f32(6, 1, 3)],
             {"group": 3, "dilations": [2], "strides": [3], "output_padding": [1]}),
        Case("ct_group2_output_shape", "ConvTranspose", [f32(1, 2, 3, 3), f32(2, 2, 3, 3)],
             {"group": 2, "strides": [3, 2], "output_shape": [10, 8]}),
        Case("ct_group4_auto_pad", "ConvTranspose", [f32(1, 4, 3, 4), f32(4, 1, 2, 2), f32(4)],
             {"group": 4, "strides": [2, 2], "auto_pad": "SAME_UPPER"}),
        Case("ct_group2_3d", "ConvTranspose", [f32(1, 4, 2, 3, 2), f32(4, 2, 2, 2, 2)], {"group": 2}),
    ]
    monkeypatch.setattr(onnx_cases, "reference_outputs", _grouped_reference)
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))


def test_compress(pytester: pytest.Pytester, run_items) -> None:
    rng = np.random.default_rng(15)
    x = rng.standard_normal((3, 5, 2)).astype(np.float32)
    cases = [
        Case("compress_axis0", "Compress", [x, np.array([True, False, True])], {"axis": 0}),
        Case("compress_axis1_short", "Compress", [x, np.array([False, True, True])], {"axis": 1}),
        Case("compress_negative_axis", "Compress", [x, np.array([True, False])], {"axis": -1}),
        Case("compress_flat", "Compress", [x, rng.integers(0, 2, 30).astype(bool)]),
        Case("compress_int_opset11", "Compress", [rng.integers(-9, 9, (4, 3)).astype(np.int64),
                                                  np.array([False, True, False, True])], {"axis": 0}, opset=11),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))
