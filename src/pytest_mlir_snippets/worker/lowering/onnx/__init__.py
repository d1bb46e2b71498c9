"""ONNX ops that torch-mlir leaves (or converts wrongly), expanded into ONNX ops it converts.

Runs on an imported ONNX model before ``convert-torch-onnx-to-torch``: each
``torch.operator "onnx.X"`` with an expander in ``_expanders()`` is offered to it;
the expander either returns the op's results, built from simpler ONNX ops and
constants computed here with numpy (shapes are static in an ONNX import), or
``None`` to leave the op to torch-mlir. The expansions follow the ONNX
specification and its reference implementation (``onnx.reference``), the same
semantics the recorded outputs were made with.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from pytest_mlir_snippets.worker.lowering.onnx.build import Body, Emitter, OnnxOp, onnx_ops, view

# after the conversion: the expansions' functions inlined, those left without a call (in an
# If's branch not taken) dropped, nothing else changed
INLINE = "builtin.module(inline{default-pipeline=}, symbol-dce)"

Expander = Callable[[OnnxOp, Emitter], "list[Any] | None"]


def _expanders() -> dict[str, Expander]:
    from pytest_mlir_snippets.worker.lowering.onnx import (
        affine,
        axes,
        col2im,
        control,
        convinteger,
        cumulative,
        deform,
        dropout,
        edges,
        elementwise,
        empty,
        indexing,
        newops,
        nms,
        pad,
        pooling,
        quant,
        recurrent,
        resize,
        roialign,
        rotary,
        sampling,
        scan,
        select,
        spacetodepth,
        spectral,
        training,
        unique,
        unpool,
    )

    return {
        "Adagrad": training.adagrad,
        "Adam": training.adam,
        "AffineGrid": affine.affine_grid,
        "ArrayFeatureExtractor": training.array_feature_extractor,
        "AveragePool": pooling.average_pool,
        "Binarizer": training.binarizer,
        "BitCast": newops.bitcast,
        "BitShift": edges.bit_shift,
        "Celu": elementwise.celu_bf16,
        "Col2Im": col2im.col2im,
        "Compress": select.compress,
        "CumProd": cumulative.cum_prod,
        "DeformConv": deform.deform_conv,
        "ConvInteger": convinteger.conv_integer,
        "ConvTranspose": select.conv_transpose,
        "Det": indexing.det,
        "DFT": spectral.dft,
        "DequantizeLinear": quant.dequantize_linear,
        "Dropout": dropout.dropout,
        "Einsum": elementwise.einsum,
        "Flatten": empty.empty_view,
        "Gelu": elementwise.gelu_tanh,
        "GridSample": sampling.grid_sample,
        "GRU": recurrent.recurrent,
        "If": control.if_,
        "Loop": control.loop,
        "LSTM": recurrent.recurrent,
        "LpNormalization": edges.lp_normalization,
        "LpPool": pooling.lp_pool,
        "MatMul": newops.matmul,
        "MaxPool": pooling.max_pool,
        "MaxUnpool": unpool.max_unpool,
        "Momentum": training.momentum,
        "NonMaxSuppression": nms.non_max_suppression,
        "Pad": pad.pad,
        "QLinearMatMul": quant.qlinear_matmul,
        "QuantizeLinear": quant.quantize_linear,
        "Range": edges.range_,
        "ReduceMax": axes.all_axes,
        "ReduceMin": axes.all_axes,
        "Reciprocal": elementwise.reciprocal,
        "Reshape": empty.empty_view,
        "RNN": recurrent.recurrent,
        "Resize": resize.resize,
        "RoiAlign": roialign.roi_align,
        "RotaryEmbedding": rotary.rotary_embedding,
        "Scan": scan.scan,
        "ScatterElements": indexing.scatter_elements,
        "Slice": axes.slice_before_13,
        "Swish": newops.swish,
        "SpaceToDepth": spacetodepth.space_to_depth,
        "Squeeze": empty.empty_view,
        "TensorScatter": newops.tensor_scatter,
        "Unique": unique.unique,
        "Unsqueeze": axes.unsqueeze,
    }


def expand(module: Any, tir: Any) -> int:
    """Expand every ONNX op there is an expander for; returns how many were expanded.

    Result types the import got wrong are set right first (``infer``): expanders read them.
    Each expansion is built in a private function of its own, at opset ``OPSET`` (the
    conversion picks an op's pattern by its function's opset, and the ops an expansion
    uses must mean what it means by them whatever the model's opset), called in the op's
    place; ``INLINE`` inlines it once converted."""
    from pytest_mlir_snippets.worker.lowering.onnx import infer

    infer.fix_result_types(module, tir)
    table = _expanders()
    expanded = 0
    for op in onnx_ops(module, tir, table):
        onnx_op = view(op, tir)
        body = Body(tir, module, op, f"onnx_expansion_{expanded}_{onnx_op.name}")
        onnx_op.inputs = [None if x is None else dataclasses.replace(x, value=body.arguments[i])
                          for i, x in enumerate(onnx_op.inputs)]
        try:
            results = table[onnx_op.name](onnx_op, Emitter(tir, body.block, op.location))
        except Exception:  # a form the expander did not foresee: torch-mlir's conversion, as without it
            results = None
        if results is None:
            body.erase()
            continue
        body.replace(results)
        expanded += 1
    return expanded
