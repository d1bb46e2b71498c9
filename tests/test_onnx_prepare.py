"""The ONNX backend's model preparation before torch-mlir's import (``onnx_backend``:
``fold.py``, ``unroll.py``, ``inline.py``, ``prepare.py``): each keeps the model's meaning
(ONNX's reference runs the prepared model to the same outputs) and types what the
inference alone leaves untyped. No compile here: ONNX's reference only."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")

from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from pytest_mlir_snippets.onnx_backend.fold import folded, static
from pytest_mlir_snippets.onnx_backend.importer import inferred
from pytest_mlir_snippets.onnx_backend.inline import inlined
from pytest_mlir_snippets.onnx_backend.prepare import prepared, typed_unused
from pytest_mlir_snippets.onnx_backend.suite import node_cases
from pytest_mlir_snippets.onnx_backend.unroll import unrolled


def _info(name: str, shape: list[int] | None, dtype: int = TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def _shapes(model) -> dict[str, list[int] | None]:
    graph = model.graph
    return {v.name: static(v) for v in [*graph.input, *graph.value_info, *graph.output]}


def _shape_by_division():
    """zeros of shape [batch, width / 4] computed from x's shape: ONNX's data propagation
    stops at the Div, so the zeros (and what they shape) are untyped."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Constant", [], ["four"], value_ints=[1, 4]),
             helper.make_node("Div", ["s", "four"], ["half"]),
             helper.make_node("ConstantOfShape", ["half"], ["zeros"]),
             helper.make_node("Add", ["zeros", "y"], ["out"])]
    graph = helper.make_graph(nodes, "shapes", [_info("x", [3, 8]), _info("y", [1, 2])], [_info("out", [3, 2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def test_folding_types_what_a_division_of_shapes_left_untyped() -> None:
    model = _shape_by_division()
    assert _shapes(inferred(model)).get("zeros") is None  # what the inference alone gives
    prepared_model = folded(model, inferred)
    assert _shapes(prepared_model)["zeros"] == [3, 2]
    assert not any(node.op_type in ("Shape", "Div") for node in prepared_model.graph.node)
    x, y = np.ones((3, 8), np.float32), np.arange(2, dtype=np.float32).reshape(1, 2)
    (expected,) = ReferenceEvaluator(model).run(None, {"x": x, "y": y})
    (got,) = ReferenceEvaluator(prepared_model).run(None, {"x": x, "y": y})
    np.testing.assert_array_equal(got, expected)


def _scan_by_hand(s0: np.ndarray, xs: np.ndarray, directions: tuple[int, int]) -> list[np.ndarray]:
    """The Scan of ``_scan``'s body as ONNX defines it (``onnx.reference`` runs direction 0 only)."""
    state, ys = s0, []
    for x in (xs[::-1] if directions[0] else xs):
        state = state + x
        ys.append(state * x)
    return [state, np.stack(ys[::-1] if directions[1] else ys)]


def _scan(directions: tuple[int, int], opset: int = 21):
    body = helper.make_graph([helper.make_node("Add", ["s", "x"], ["s2"]), helper.make_node("Mul", ["s2", "x"], ["y"])],
                             "body", [_info("s", [2]), _info("x", [2])], [_info("s2", [2]), _info("y", [2])])
    node = helper.make_node("Scan", ["s0", "xs"], ["sf", "ys"], num_scan_inputs=1, body=body,
                            scan_input_directions=[directions[0]], scan_output_directions=[directions[1]])
    graph = helper.make_graph([node], "scan", [_info("s0", [2]), _info("xs", [4, 2])],
                              [_info("sf", [2]), _info("ys", [4, 2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("directions", [(0, 0), (1, 0), (0, 1)])
def test_an_unrolled_scan_gives_the_scan_outputs(directions) -> None:
    """The unrolled graph runs to the Scan's outputs, whichever way the input and output
    scan; those of the other input direction differ. Below opset 13 nothing is unrolled
    (the worker's unrolling takes those)."""
    s0, xs = np.array([0.5, -1.0], np.float32), np.arange(8, dtype=np.float32).reshape(4, 2) / 3
    if directions == (0, 0):
        reference = ReferenceEvaluator(_scan(directions)).run(None, {"s0": s0, "xs": xs})
        np.testing.assert_allclose(reference[1], _scan_by_hand(s0, xs, directions)[1], rtol=1e-6)
    flat = unrolled(inferred(_scan(directions)))
    assert flat is not None and not any(node.op_type == "Scan" for node in flat.graph.node)
    got = ReferenceEvaluator(flat).run(None, {"s0": s0, "xs": xs})
    for value, want in zip(got, _scan_by_hand(s0, xs, directions), strict=True):
        np.testing.assert_allclose(value, want, rtol=1e-6)
    other = _scan_by_hand(s0, xs, (1 - directions[0], directions[1]))
    assert not np.allclose(got[1], other[1])
    assert unrolled(inferred(_scan(directions, opset=11))) is None


def test_linear_attention_inlined_keeps_its_outputs() -> None:
    case = next(c for c in node_cases() if c.name == "test_linear_attention_linear_t1_no_past")
    inputs, expected = case.data_sets[0]
    flat = inlined(inferred(case.model))
    assert flat is not None and "LinearAttention" not in {node.op_type for node in flat.graph.node}
    feeds = {v.name: np.asarray(x) for v, x in zip(case.model.graph.input, inputs, strict=False)}
    got = ReferenceEvaluator(flat).run(None, feeds)
    for value, want in zip(got, expected, strict=True):
        np.testing.assert_allclose(value, want, rtol=case.rtol, atol=case.atol)
    with pytest.raises(AssertionError):  # the comparison sees a 1% change
        np.testing.assert_allclose(got[0] * 1.01, expected[0], rtol=case.rtol, atol=case.atol)


def test_an_output_left_out_is_named_and_typed_and_a_lone_domain_gets_an_opset() -> None:
    case = next(c for c in node_cases() if c.name == "test_attention_4d_with_qk_matmul")
    model = type(case.model)()
    model.CopyFrom(case.model)
    prepared(model, {"Attention"})
    outputs = list(model.graph.node[0].output)
    assert "" not in outputs[:3] and outputs[3] == case.model.graph.node[0].output[3]
    model = inferred(model)
    typed_unused(model)
    typed = {v.name: v.type.tensor_type.elem_type for v in model.graph.value_info}
    assert typed[outputs[1]] == typed[outputs[2]] == TensorProto.FLOAT
    ml = next(c for c in node_cases() if c.name == "test_ai_onnx_ml_binarizer").model
    assert not any(o.domain in ("", "ai.onnx") for o in ml.opset_import)
    prepared(ml, set())
    assert any(o.domain == "" and o.version == 21 for o in ml.opset_import)
