"""Import-type problems and crashes fixed in worker/lowering/onnx/: NonMaxSuppression (torch-mlir's
conversion aborts under a score threshold), views with an empty result (SIGFPE in torch-mlir's view
lowering) and reductions whose result type the import declared rank 0 (axes an input), each against
ONNX's reference implementation on seeded random inputs."""

from __future__ import annotations

import numpy as np
import pytest

from onnx_cases import Case
from test_onnx_expand import assert_all_pass_on_recorded, run_cases

pytest.importorskip("onnx")
pytest.importorskip("torch_mlir")
pytestmark = pytest.mark.slow


def _boxes(rng: np.random.Generator, b: int, n: int, center: bool) -> np.ndarray:
    """Boxes crowded enough to overlap, corners in either order for the corner format."""
    a = rng.uniform(0, 4, (b, n, 2)).astype(np.float32)
    size = rng.uniform(0.5, 3, (b, n, 2)).astype(np.float32)
    if center:
        return np.concatenate([a, size], -1)
    far = a + size
    flip = rng.random((b, n, 1)) < 0.5
    return np.concatenate([np.where(flip, far, a), np.where(flip, a, far)], -1)[..., [1, 0, 3, 2]]


def _nms(name: str, rng: np.random.Generator, b: int, c: int, n: int, max_out: int, iou: float, score: float,
         center: int = 0, ties: bool = False) -> Case:
    """onnx.reference needs all five inputs given, so absent ones are not covered here."""
    scores = rng.random((b, c, n)).astype(np.float32)
    if ties:
        scores = np.round(scores * 3) / 3
    inputs: list[np.ndarray | None] = [_boxes(rng, b, n, bool(center)), scores, np.array([max_out], np.int64),
                                       np.array([iou], np.float32), np.array([score], np.float32)]
    return Case(name, "NonMaxSuppression", inputs, {"center_point_box": center} if center else {}, opset=11)


def test_non_max_suppression_against_the_reference(pytester: pytest.Pytester, run_items) -> None:
    rng = np.random.default_rng(11)
    cases = [
        _nms("nms_iou_and_scores", rng, 1, 1, 8, 5, 0.3, 0.4),
        _nms("nms_center_format", rng, 1, 2, 7, 3, 0.2, 0.1, center=1),
        _nms("nms_batches_classes", rng, 2, 3, 6, 4, 0.25, 0.3),
        _nms("nms_low_score_threshold", rng, 2, 1, 9, 2, 0.5, -1.0),
        _nms("nms_zero_iou_threshold", rng, 1, 2, 5, 10, 0.0, 0.0),
        _nms("nms_tied_scores", rng, 1, 2, 8, 8, 0.3, 0.2, ties=True),
        _nms("nms_max_zero", rng, 1, 1, 4, 0, 0.5, 0.0),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))


def test_empty_views_and_reductions_against_the_reference(pytester: pytest.Pytester, run_items) -> None:
    rng = np.random.default_rng(12)
    empty = np.zeros((0, 3, 4), np.float32)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    cases = [
        Case("reshape_allowzero", "Reshape", [empty, np.array([3, 4, 0], np.int64)], {"allowzero": 1}),
        Case("reshape_empty_copy", "Reshape", [np.zeros((2, 0, 3), np.float32), np.array([3, 0, 2], np.int64)]),
        Case("flatten_empty", "Flatten", [np.zeros((2, 3, 0), np.float32)], {"axis": 1}),
        Case("unsqueeze_empty", "Unsqueeze", [np.zeros((2, 0), np.int64), np.array([1], np.int64)]),
        Case("squeeze_empty", "Squeeze", [np.zeros((1, 0, 3), np.float32), np.array([0], np.int64)]),
        Case("reduce_sum_axes_input", "ReduceSum", [x, np.array([-1, 0], np.int64)], {"keepdims": 0}),
        Case("reduce_sum_empty_axes", "ReduceSum", [x, np.zeros(0, np.int64)], {"keepdims": 1}),
        Case("reduce_sum_noop", "ReduceSum", [x, np.zeros(0, np.int64)], {"noop_with_empty_axes": 1}),
        Case("reduce_l2_axes_input", "ReduceL2", [x, np.array([1], np.int64)], opset=18),
        Case("reduce_sum_opset11", "ReduceSum", [x], {"axes": [1, 2], "keepdims": 0}, opset=11),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))


T_IN, T_OUT, T_BAD = "!torch.vtensor<[3,2,2],f32>", "!torch.vtensor<[3,2,1],f32>", "!torch.vtensor<[],f32>"
REDUCE_CHAIN = f"""
func.func @f(%arg0: {T_IN}) -> {T_OUT} attributes {{torch.onnx_meta.opset_version = 18 : si64}} {{
  %axes = torch.vtensor.literal(dense<-1> : tensor<1xsi64>) : !torch.vtensor<[1],si64>
  %0 = torch.operator "onnx.ReduceSum"(%arg0, %axes) {{torch.onnx.keepdims = 1 : si64}}
    : ({T_IN}, !torch.vtensor<[1],si64>) -> {T_BAD}
  %1 = torch.operator "onnx.Sqrt"(%0) : ({T_BAD}) -> {T_BAD}
  %2 = torch.operator "onnx.Add"(%1, %1) : ({T_BAD}, {T_BAD}) -> {T_BAD}
  %3 = torch.operator "onnx.CastLike"(%2, %arg0) : ({T_BAD}, {T_IN}) -> {T_OUT}
  return %3 : {T_OUT}
}}
"""


def test_reduction_result_types_carried_forward() -> None:
    """The expanded ReduceX tests' pattern: a rank-0 declared reduction and the elementwise ops after it."""
    from torch_mlir import ir
    from torch_mlir.dialects import torch as torch_dialect

    from pytest_mlir_snippets.worker.lowering.onnx import infer

    with ir.Context() as context, ir.Location.unknown():
        torch_dialect.register_dialect(context)
        module = ir.Module.parse(REDUCE_CHAIN)
        assert infer.fix_result_types(module, ir) == 3
        text = str(module)
    assert text.count("-> !torch.vtensor<[3,2,1],f32>") == 5, text  # the signature and four ops
    assert "vtensor<[],f32>" not in text, text
