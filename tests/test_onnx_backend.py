"""The ONNX backend (``pytest_mlir_snippets.onnx_backend``) in the style of onnxruntime's
backend test series: ONNX's own harness (``BackendTest`` with include patterns) on a fixed
sample of node cases, the harness's comparison sabotaged, a hang that fails one model, and
the recorded mode (``onnx-tests --write``) giving the same pass list as the harness."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("torch_mlir")

import onnx
import onnx.backend.test

from pytest_mlir_snippets import onnx_backend
from pytest_mlir_snippets.onnx_backend import BackendError, OnnxBackend
from pytest_mlir_snippets.onnx_backend.suite import node_cases, runnable, unmatchable

# a fixed sample: elementwise, a reduction with axes as an input (baked in), an integer
# result, the expansions of worker/lowering/onnx/ (BitCast, CumProd, TensorScatter, RotaryEmbedding,
# Swish, MatMul with a vector, Dropout of opset 11; RMSNormalization's function body with its axes
# folded; BitShift out of range, LpNormalization of a zero vector, Range in f16, GRU in reverse,
# Adagrad and Binarizer with the default-domain opset they lack, Attention with an output left
# out, LinearAttention's body inlined and unrolled, a Scan-9 whose Concat moves to opset 21);
# small types carried as bytes (onnx_backend/smalltypes.py): f8 and f4 casts either way,
# with and without saturation, e8m0, a 4-bit QuantizeLinear and an f8 DequantizeLinear; and
# a case the plugin fails (Scan-8: a batch axis, which the unrolling does not take);
# MISC: FlexAttention's function body with a score_mod graph, DFT's irfft, an opset-11
# ReduceMin without axes and an opset-11 Loop (Unsqueeze and Slice of opset 11), ConvInteger
# with pads, SpaceToDepth in CRD mode, Gelu tanh, an Einsum of a scalar
MISC = ("test_flexattention_causal_mask", "test_dft_irfft", "test_dynamicquantizelinear_expanded", "test_loop11",
        "test_convinteger_with_padding", "test_spacetodepth_crd_mode_example", "test_gelu_tanh_2", "test_einsum_scalar")
SAMPLE = ("test_abs", "test_argmax_default_axis_example", "test_reduce_sum_keepdims_example",
          "test_bitcast_float32_to_int32", "test_cumprod_1d_reverse_exclusive", "test_rotary_embedding_interleaved",
          "test_swish", "test_rms_normalization_3d_axis1_epsilon", "test_tensorscatter_circular",
          "test_matmul_1d_3d", "test_dropout_random_old", "test_bitshift_right_int32_shift_ge_width",
          "test_l2normalization_axis_0", "test_range_float16_type_positive_delta", "test_gru_reverse",
          "test_adagrad", "test_ai_onnx_ml_binarizer", "test_attention_4d_with_qk_matmul",
          "test_linear_attention_linear_t1_no_past", "test_scan9_sum",
          "test_cast_FLOAT_to_FLOAT8E4M3FN", "test_cast_no_saturate_FLOAT16_to_FLOAT8E5M2",
          "test_castlike_FLOAT4E2M1_to_FLOAT_expanded", "test_cast_e8m0_FLOAT_to_FLOAT8E8M0",
          "test_quantizelinear_int4", "test_dequantizelinear_e4m3fn_zero_point",
          *MISC)
FAILING = "test_scan_sum"

with warnings.catch_warnings():  # onnx's case generators cast out-of-range values on purpose
    warnings.simplefilter("ignore")
    backend_test = onnx.backend.test.BackendTest(OnnxBackend, __name__)
for name in (*SAMPLE, FAILING):
    backend_test.include(rf"^{name}_cpu$")
backend_test.xfail(rf"^{FAILING}_cpu$")  # a known failure, as onnxruntime marks its own
# only the node cases: the "real" ones download models
OnnxBackendNodeModelTest = runnable(backend_test.test_cases["OnnxBackendNodeModelTest"], "cpu", __name__)


def _case(name: str):
    return next(case for case in node_cases() if case.name == name)


def test_the_harness_fails_a_wrong_output() -> None:
    """The sample's verdicts are the harness's own comparison: an output scaled, or of
    another type, fails it."""
    case = _case("test_abs")
    inputs, expected = case.data_sets[0]
    outputs = onnx_backend.prepare(case.model, "CPU").run(inputs)
    backend_test.assert_similar_outputs(expected, outputs, rtol=case.rtol, atol=case.atol)
    with pytest.raises(AssertionError, match="Not equal to tolerance"):
        backend_test.assert_similar_outputs([expected[0] * 1.01], outputs, rtol=case.rtol, atol=case.atol)
    with pytest.raises(AssertionError):
        backend_test.assert_similar_outputs([expected[0].astype(np.float64)], outputs, rtol=case.rtol, atol=case.atol)
    assert onnx_backend.supports_device("CPU") and not onnx_backend.supports_device("CUDA")


def test_run_node_and_run_model_give_the_reference() -> None:
    node = onnx.helper.make_node("Relu", ["x"], ["y"])
    x = np.array([[-1.5, 2.0], [0.25, -3.0]], np.float32)
    (y,) = onnx_backend.run_node(node, [x])
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    case = _case("test_argmax_default_axis_example")
    (indices,) = onnx_backend.run_model(case.model, case.data_sets[0][0])
    assert indices.dtype == np.int64
    np.testing.assert_array_equal(indices, case.data_sets[0][1][0])


def test_reciprocal_of_zero_and_nan_is_the_reference() -> None:
    """torch-mlir's lowering of Reciprocal asserts every element is non-zero and ordered
    (the compiled code aborted on -0.0); the expansion gives 1 / x, and a wrong value fails."""
    node = onnx.helper.make_node("Reciprocal", ["x"], ["y"])
    x = np.array([-0.0, 0.0, np.nan, 4.0], np.float32)
    (y,) = onnx_backend.run_node(node, [x])
    expected = np.array([-np.inf, np.inf, np.nan, 0.25], np.float32)
    np.testing.assert_array_equal(y, expected)
    with pytest.raises(AssertionError):
        np.testing.assert_array_equal(y, expected * 2)


def test_a_hang_fails_that_model_only() -> None:
    """A compile that does not finish in time is that model's BackendError (the worker is
    killed); the next model gets a fresh worker."""
    case = _case("test_relu")  # compiled nowhere else in this file: not in the worker's cache
    with pytest.raises(BackendError, match=r"^timeout: no answer within"):
        onnx_backend.prepare(case.model, "CPU", timeout=0.001).run(case.data_sets[0][0])
    (y,) = onnx_backend.prepare(case.model, "CPU").run(case.data_sets[0][0])
    np.testing.assert_array_equal(y, case.data_sets[0][1][0])


def test_what_does_not_import_is_one_line() -> None:
    """A type neither torch-mlir's importer nor the small types' carriers take (f6)."""
    f6 = onnx.TensorProto.FLOAT6E2M3
    graph = onnx.helper.make_graph([onnx.helper.make_node("Identity", ["x"], ["y"])], "f6",
                                   [onnx.helper.make_tensor_value_info("x", f6, [2])],
                                   [onnx.helper.make_tensor_value_info("y", f6, [2])])
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 25)])
    with pytest.raises(BackendError, match=rf"^torch-mlir's ONNX importer: .*element type: {f6}") as error:
        onnx_backend.prepare(model, "CPU")
    assert "\n" not in str(error.value)
    rep = onnx_backend.prepare(_case("test_abs").model, "CPU")
    with pytest.raises(BackendError, match=r"^input 0 is a list \(a sequence or optional\): the cpu target takes "
                       r"tensors only$"):
        rep.run([[np.ones((3, 4, 5), np.float32)]])  # a sequence where the harness would pass one


def test_small_types_reach_the_harness_in_their_declared_types() -> None:
    """An f8 output read back as ml_dtypes' f8 (the carrier's bytes viewed), compared by the
    harness; an f8 value one code off fails it."""
    from pytest_mlir_snippets.onnx_backend.write import tensor

    case = _case("test_cast_FLOAT_to_FLOAT8E4M3FN")
    inputs, expected = ([tensor(v) for v in values] for values in case.data_sets[0])
    (output,) = onnx_backend.prepare(case.model, "CPU").run(inputs)
    assert output.dtype == expected[0].dtype and output.dtype.name == "float8_e4m3fn"
    backend_test.assert_similar_outputs(expected, [output], rtol=case.rtol, atol=case.atol)
    off = expected[0].copy()
    off.view(np.uint8)[0, 0] += 1
    with pytest.raises(AssertionError):
        backend_test.assert_similar_outputs([off], [output], rtol=case.rtol, atol=case.atol)


def test_bf16_cases_are_written_with_the_harness_bf16_rtol(tmp_path) -> None:
    """ONNX's harness compares bf16 outputs with rtol >= 2^-6; the written case says so, the
    others keep their own rtol."""
    from pytest_mlir_snippets.onnx_backend.write import write_case

    write_case(_case("test_attention_3d_causal_bf16"), tmp_path / "bf16")
    write_case(_case("test_abs"), tmp_path / "f32")
    assert "// mlir-snippets: rtol=0.015625 atol=1e-07" in (tmp_path / "bf16" / "model.mlir").read_text()
    assert "// mlir-snippets: rtol=0.001 atol=1e-07" in (tmp_path / "f32" / "model.mlir").read_text()


def test_the_unmatchable_cases() -> None:
    reasons = {case.name: unmatchable(case.name, case.model) for case in node_cases()}
    assert reasons["test_bernoulli_expanded"] and "random" in str(reasons["test_bernoulli_expanded"])
    assert reasons["test_training_dropout"] and reasons["test_training_dropout_zero_ratio"] is None
    assert "LabelEncoder" in str(reasons["test_ai_onnx_ml_label_encoder_tensor_mapping"])
    assert reasons["test_abs"] is None and reasons["test_equal_string"] is None  # Equal is not in the list


def _sabotaged(folder, name: str, new: str, change) -> None:
    """A copy of case ``name`` as ``new`` whose recorded output is ``change(bytes)``."""
    copy = folder / new
    copy.mkdir()
    for file in (folder / name).iterdir():
        (copy / file.name).write_bytes(file.read_bytes())
    model = copy / "model.mlir"
    model.write_text(model.read_text().replace(f"@{name}(", f"@{new}("))
    (copy / "output_0.bin").write_bytes(change((copy / "output_0.bin").read_bytes()))


@pytest.mark.slow
def test_the_recorded_mode_gives_the_harness_pass_list(pytester: pytest.Pytester, run_items) -> None:
    """``onnx-tests --write``: the cases as IREE-layout folders that the plugin runs on their
    recorded outputs, with the case's own tolerance; the same passes as the harness, and a
    recorded output changed fails its case."""
    from pytest_mlir_snippets.onnx_backend.write import tensor
    from pytest_mlir_snippets.tools.cli import main

    pattern = ("^(test_abs|test_argmax_default_axis_example|test_gru_reverse|test_scan_sum|"
               "test_sequence_insert_at_back|test_quantizelinear_e4m3fn)$")
    assert main(["onnx-tests", "--write", str(pytester.path / "cases"), "-k", pattern]) == 0
    folder = pytester.path / "cases"
    assert "// mlir-snippets: rtol=0.001 atol=1e-07" in (folder / "test_abs" / "model.mlir").read_text()
    # an f8 tensor is written as the bytes the import carries it in
    assert "--expected_output=5xui8=@output_0.bin" in (folder / "test_quantizelinear_e4m3fn" /
                                                        "run_module_io_flags.txt").read_text()
    assert not (folder / "test_sequence_insert_at_back").exists()  # a sequence input: listed as not written
    assert "test_sequence_insert_at_back" in (folder / "onnx-tests.json").read_text()
    _sabotaged(folder, "test_abs", "test_abs_scaled", lambda raw: (np.frombuffer(raw, np.float32) * 1.01).tobytes())
    # an f8 code one off (2.0 quantized by scale 2: 1.0, code 0x38, as 0x39)
    _sabotaged(folder, "test_quantizelinear_e4m3fn", "test_quantizelinear_e4m3fn_off",
               lambda raw: raw[:2] + bytes([raw[2] + 1]) + raw[3:])
    result, props = run_items("-p", "no:randomly", "cases")
    passed = {k.split("::")[1].split("[")[0] for k, p in props.items() if k.endswith("[execute]")
              and p["outcome"] == "passed"}
    failed = {k.split("::")[1].split("[")[0] for k, p in props.items() if p["outcome"] == "failure"}
    assert passed == {"test_abs", "test_argmax_default_axis_example", "test_gru_reverse",
                      "test_quantizelinear_e4m3fn"}, result.stdout.str()
    assert failed == {"test_scan_sum", "test_abs_scaled", "test_quantizelinear_e4m3fn_off"}, result.stdout.str()
    harness = set()
    for name in ("test_abs", "test_argmax_default_axis_example", "test_gru_reverse", "test_quantizelinear_e4m3fn",
                 FAILING):
        case = _case(name)
        try:
            inputs, expected = ([tensor(v) for v in values] for values in case.data_sets[0])
            outputs = onnx_backend.prepare(case.model, "CPU").run(inputs)
            backend_test.assert_similar_outputs(expected, outputs, case.rtol, case.atol)
        except (BackendError, AssertionError):
            continue
        harness.add(name)
    assert harness == passed


@pytest.mark.slow
def test_the_command_runs_the_harness_under_pytest(tmp_path, capfd: pytest.CaptureFixture[str]) -> None:
    """``mlir-snippets onnx-tests --target cpu -k PATTERN [pytest args]``: ONNX's harness in a
    pytest run of its own (node cases of the target's device only); its exit status is pytest's."""
    from pytest_mlir_snippets.tools.cli import main

    status = main(["onnx-tests", "--target", "cpu", "-k", "^test_(abs|scan_sum)_cpu$", "-p", "no:randomly", "-q",
                   "-rA", f"--rootdir={tmp_path}"])
    out = capfd.readouterr().out
    assert status == 1, out
    assert "PASSED" in out and "::OnnxBackendNodeModelTest::test_abs_cpu" in out
    assert "FAILED" in out and "::test_scan_sum_cpu" in out and "BackendError: compile-error: " in out, out
    assert "1 failed, 1 passed" in out and "_cuda" not in out


def test_scan_is_unrolled_as_the_reference_runs_it() -> None:
    """Scan (torch-mlir has no conversion) unrolled (``onnx_backend/unroll.py`` at opset 21,
    ``worker/lowering/onnx/scan.py`` below 13): the final state and the stacked scan outputs
    as ONNX's reference gives them; the outputs of the scan run backwards (which the same
    body gives) do not match."""
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    def info(name: str, shape: list[int]):
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)

    body = helper.make_graph([helper.make_node("Add", ["s", "x"], ["s2"]), helper.make_node("Mul", ["s2", "x"], ["y"])],
                             "body", [info("s", [2]), info("x", [2])], [info("s2", [2]), info("y", [2])])
    node = helper.make_node("Scan", ["s0", "xs"], ["sf", "ys"], num_scan_inputs=1, body=body)
    graph = helper.make_graph([node], "scan_case", [info("s0", [2]), info("xs", [4, 2])], [info("sf", [2]),
                                                                                            info("ys", [4, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    rng = np.random.default_rng(3)
    s0, xs = rng.standard_normal(2).astype(np.float32), rng.standard_normal((4, 2)).astype(np.float32)
    expected = ReferenceEvaluator(model).run(None, {"s0": s0, "xs": xs})
    outputs = onnx_backend.prepare(model, "CPU").run([s0, xs])
    backend_test.assert_similar_outputs(expected, outputs, rtol=1e-5, atol=1e-6)
    backwards = ReferenceEvaluator(model).run(None, {"s0": s0, "xs": xs[::-1].copy()})
    with pytest.raises(AssertionError):
        backend_test.assert_similar_outputs(backwards, outputs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("name", "sabotage"), [
    # the reverse direction's Y in the forward order
    ("test_gru_reverse", lambda outputs: [outputs[0][::-1].copy(), *outputs[1:]]),
    # a right shift by the width or more as a shift by the amount modulo the width (x86's)
    ("test_bitshift_right_int32_shift_ge_width", None),
    # a zero vector's 0/0 left as NaN
    ("test_l2normalization_axis_0", lambda outputs: [np.where(outputs[0] == 0, np.nan, outputs[0])]),
])
def test_the_new_expansions_give_the_reference_and_a_sabotage_fails(name, sabotage) -> None:
    """The forms ``worker/lowering/onnx/`` now expands give ONNX's reference outputs; the
    result an undefined or naive lowering gives instead does not match."""
    case = _case(name)
    inputs, expected = case.data_sets[0]
    outputs = onnx_backend.prepare(case.model, "CPU").run(inputs)
    backend_test.assert_similar_outputs(expected, outputs, rtol=case.rtol, atol=case.atol)
    if sabotage is None:
        x, amount = (onnx.numpy_helper.to_array(v) if isinstance(v, onnx.TensorProto) else np.asarray(v)
                     for v in inputs)
        naive = [np.right_shift(x, amount % 32)]
        assert not np.array_equal(naive[0], expected[0])
    else:
        naive = sabotage(list(outputs))
    with pytest.raises(AssertionError):
        backend_test.assert_similar_outputs(expected, naive, rtol=case.rtol, atol=case.atol)


def test_the_harness_skips_a_case_computed_at_compile_time_and_says_when_nothing_was_compared(
        tmp_path, capfd: pytest.CaptureFixture[str]) -> None:
    """``Shape``'s output is the input's static shape: the compiler computes it, no code runs
    on the data; the backend raises the harness's skip (never a pass). A Slice whose output
    has no element passes, saying "0 elements compared" (a warning) and ``compared`` 0."""
    import unittest

    from pytest_mlir_snippets.tools.cli import main

    case = _case("test_shape")
    with pytest.raises(unittest.SkipTest, match="computed at compile time"):
        onnx_backend.prepare(case.model, "CPU").run(case.data_sets[0][0])
    xml = tmp_path / "junit.xml"
    status = main(["onnx-tests", "--target", "cpu", "-k", "^test_(abs|shape|slice_start_out_of_bounds)_cpu$",
                   "-p", "no:randomly", "-q", "-rA", f"--rootdir={tmp_path}", f"--junitxml={xml}"])
    out = capfd.readouterr().out
    assert status == 0, out
    assert "2 passed, 1 skipped" in out and "computed at compile time: no output depends on the inputs" in out, out
    assert "NothingCompared: 0 elements compared" in out and "test_slice_start_out_of_bounds_cpu" in out, out
    assert '<property name="compared" value="0" />' in xml.read_text()
