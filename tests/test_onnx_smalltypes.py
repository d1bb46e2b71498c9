"""Small element types (f8, e8m0, f4, 4-bit and 2-bit integers) carried as bytes in an ONNX
model (``onnx_backend/smalltypes.py``): the Cast expansions on the bytes, run by ONNX's
reference evaluator, against ml_dtypes' conversions (which ONNX's reference Cast uses) and
``onnx.numpy_helper.to_float8e8m0``, on every f16 value and f32's ties and specials; a
rounding other than ties-to-even fails the comparison."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
ml_dtypes = pytest.importorskip("ml_dtypes")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from pytest_mlir_snippets.onnx_backend import smallcasts, smallcodes  # noqa: E402
from pytest_mlir_snippets.onnx_backend.smalltypes import carried_inputs, carry, declared_outputs  # noqa: E402

# ONNX's reference divides by zero on purpose (1 / -0 tells -0's sign)
pytestmark = pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning",
                                        "ignore:invalid value:RuntimeWarning")
F8 = {TensorProto.FLOAT8E4M3FN: "float8_e4m3fn", TensorProto.FLOAT8E4M3FNUZ: "float8_e4m3fnuz",
      TensorProto.FLOAT8E5M2: "float8_e5m2", TensorProto.FLOAT8E5M2FNUZ: "float8_e5m2fnuz"}
INTS = {TensorProto.INT4: "int4", TensorProto.UINT4: "uint4", TensorProto.INT2: "int2", TensorProto.UINT2: "uint2"}


def _cast_model(source: int, to: int, n: int, **attrs: object):
    node = helper.make_node("Cast", ["x"], ["y"], to=to, **attrs)
    graph = helper.make_graph([node], "cast", [helper.make_tensor_value_info("x", source, [n])],
                              [helper.make_tensor_value_info("y", to, [n])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])


def _run_carried(model, x: np.ndarray) -> np.ndarray:
    carried = carry(model)
    (fed,) = carried_inputs([x], carried.inputs)
    (y,) = declared_outputs(ReferenceEvaluator(carried.model).run(None, {"x": fed}), carried.outputs)
    return y


def _bytes(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint8)


def _f32_probes(dtype: np.dtype) -> np.ndarray:
    """Every value of the type, the midpoints between neighbours (the ties), a little either
    side of them, beyond the largest value, signed zeros, infinities and NaN."""
    values = np.arange(256, dtype=np.uint8).view(dtype).astype(np.float64)
    values = np.unique(values[np.isfinite(values)])
    middles = (values[:-1] + values[1:]) / 2
    top = values[-1]
    probes = np.concatenate([values, middles, middles * (1 + 2**-20), middles * (1 - 2**-20),
                             [top * 1.01, top * 1.2, top * 4, 1e30, -0.0, 0.0, np.inf, -np.inf, np.nan]])
    return np.concatenate([probes, -probes]).astype(np.float32)


def _expected(x: np.ndarray, dtype: np.dtype, saturate: bool) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        if saturate:  # ONNX's saturate_cast: clip to the type's range, then convert
            info = ml_dtypes.finfo(dtype)
            return np.clip(x, info.min, info.max).astype(dtype)
        return x.astype(dtype)


def f8_mismatches(onnx_type: int, source: int, saturate: bool) -> int:
    """How many probe values the expansion converts to another code than ml_dtypes (NaN
    compared as NaN whatever its sign, as ONNX's harness does)."""
    dtype = np.dtype(getattr(ml_dtypes, F8[onnx_type]))
    if source == TensorProto.FLOAT16:
        x = np.arange(65536, dtype=np.uint16).view(np.float16)
    else:
        x = _f32_probes(dtype)
    got = _run_carried(_cast_model(source, onnx_type, x.size, saturate=int(saturate)), x)
    want = _expected(x, dtype, saturate)
    both_nan = np.isnan(got.astype(np.float32)) & np.isnan(want.astype(np.float32))
    return int(np.count_nonzero((_bytes(got) != _bytes(want)) & ~both_nan))


@pytest.mark.parametrize("onnx_type", sorted(F8))
def test_f8_casts_are_ml_dtypes_bit_for_bit(onnx_type: int) -> None:
    for source in (TensorProto.FLOAT16, TensorProto.FLOAT):
        for saturate in (True, False):
            assert f8_mismatches(onnx_type, source, saturate) == 0, (source, saturate)


def test_f4_and_its_decoding() -> None:
    dtype = np.dtype(ml_dtypes.float4_e2m1fn)
    x = _f32_probes(np.dtype(ml_dtypes.float8_e4m3fn))  # f4's ties are among f8's values
    got = _run_carried(_cast_model(TensorProto.FLOAT, TensorProto.FLOAT4E2M1, x.size), x)
    finite = ~np.isnan(x)  # ml_dtypes gives NaN f4's -0 code, and -NaN +0: the expansion +NaN's
    np.testing.assert_array_equal(_bytes(got)[finite], _bytes(x.astype(dtype))[finite])
    for onnx_type, name in (*F8.items(), (TensorProto.FLOAT4E2M1, "float4_e2m1fn"),
                            (TensorProto.FLOAT8E8M0, "float8_e8m0fnu")):
        small = np.dtype(getattr(ml_dtypes, name))
        codes = np.arange(16 if "float4" in name else 256, dtype=np.uint8).view(small)
        decoded = _run_carried(_cast_model(onnx_type, TensorProto.FLOAT, codes.size), codes)
        np.testing.assert_array_equal(decoded, codes.astype(np.float32))  # NaN where NaN


@pytest.mark.parametrize("mode", ["up", "down", "nearest"])
def test_e8m0_rounds_as_onnx_numpy_helper(mode: str) -> None:
    powers = np.ldexp(np.float32(1), np.arange(-149, 128)).astype(np.float32)
    x = np.concatenate([powers, powers * 1.5, powers * 1.25, powers * 1.75, np.nextafter(powers, np.float32(0)),
                        -powers * 1.5, [0.0, -0.0, np.inf, -np.inf, np.nan, 3.4e38]]).astype(np.float32)
    for saturate in (1, 0):
        got = _run_carried(_cast_model(TensorProto.FLOAT, TensorProto.FLOAT8E8M0, x.size, saturate=saturate,
                                       round_mode=mode), x)
        want = numpy_helper.to_float8e8m0(x, bool(saturate), mode)
        np.testing.assert_array_equal(_bytes(got), _bytes(want), err_msg=f"saturate={saturate}")


def test_small_integers_truncate_and_give_zero_out_of_range() -> None:
    x = np.concatenate([np.arange(-20, 20, 0.25), [np.nan, np.inf, -np.inf, -0.0, 1e9]]).astype(np.float32)
    for onnx_type, name in INTS.items():
        dtype = np.dtype(getattr(ml_dtypes, name))
        got = _run_carried(_cast_model(TensorProto.FLOAT, onnx_type, x.size), x)
        assert got.dtype == dtype
        with np.errstate(invalid="ignore"):
            np.testing.assert_array_equal(got.astype(np.int32), x.astype(dtype).astype(np.int32), err_msg=name)


def test_a_wrong_rounding_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ties rounded away from zero (every midpoint reached at equality), or thresholds a
    little off, give other codes than ml_dtypes: the comparison above sees it."""
    right = smallcodes.codes(TensorProto.FLOAT8E4M3FN)
    away = type(right)(**{**right.__dict__, "reach": np.sort(np.concatenate([right.reach, right.exceed])),
                          "exceed": np.zeros(0)})
    monkeypatch.setattr(smallcasts, "codes", lambda onnx_type: away)
    assert f8_mismatches(TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT16, True) > 0
    shifted = type(right)(**{**right.__dict__, "exceed": right.exceed * (1 + 2**-12)})
    monkeypatch.setattr(smallcasts, "codes", lambda onnx_type: shifted)
    assert f8_mismatches(TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT, True) > 0


def test_a_form_not_foreseen_is_left_to_the_importer() -> None:
    """A round_mode ONNX does not define leaves the Cast as it is (the importer or the compile
    then says what it lacks); the graph's e8m0 output is still carried as bytes."""
    model = _cast_model(TensorProto.FLOAT, TensorProto.FLOAT8E8M0, 4, round_mode="sideways")
    carried = carry(model)
    assert [n.op_type for n in carried.model.graph.node] == ["Cast"]
    assert carried.outputs[0] is not None and carried.model.graph.output[0].type.tensor_type.elem_type == \
        TensorProto.UINT8
