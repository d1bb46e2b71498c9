"""Loop unrolled and If inlined (worker/lowering/onnx/control.py) where their trip count and
conditions are known at compile time (the plugin bakes the recorded small integer and
boolean inputs in on its retry), against ONNX's reference implementation on seeded inputs.

Scan values are rank 1 here: the reference stacks them with ``np.vstack``, which agrees
with the specification's stacking on a new axis 0 for rank 1 only."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from onnx_cases import Case
from test_onnx_expand import assert_all_pass_on_recorded, run_cases

onnx = pytest.importorskip("onnx")
pytest.importorskip("torch_mlir")
pytestmark = pytest.mark.slow

from onnx import TensorProto, helper  # noqa: E402

F, I64, I32, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32, TensorProto.BOOL


def _graph(name: str, nodes: list[Any], inputs: list[tuple[str, int, list[int]]],
           outputs: list[tuple[str, int, list[int] | None]], outer: tuple[tuple[str, int, list[int]], ...] = (),
           opset: int = 13) -> Any:
    """A subgraph with the types of its intermediate values inferred (the importer types a value
    it has none for as none); ``outer``: the enclosing values it reads, for the inference only."""
    def info(items: Any) -> list[Any]:
        return [helper.make_tensor_value_info(n, t, s) for n, t, s in items]

    graph = helper.make_graph(nodes, name, info(inputs), info(outputs))
    alone = helper.make_graph(nodes, name, info([*inputs, *outer]), info(outputs))
    model = helper.make_model(alone, opset_imports=[helper.make_opsetid("", opset)])
    inferred = onnx.shape_inference.infer_shapes(model)
    graph.value_info.extend(v for v in inferred.graph.value_info if v.name not in {o[0] for o in outputs})
    return graph


def _const(name: str, value: np.ndarray) -> Any:
    return helper.make_node("Constant", [], [name], value=onnx.numpy_helper.from_array(value, name))


def _ints(name: str, value: int | list[int]) -> Any:
    """An integer Constant as an attribute the importer keeps inline (folded at compile time)."""
    key = "value_ints" if isinstance(value, list) else "value_int"
    return helper.make_node("Constant", [], [name], **{key: value})


def _slice_body(opset: int, table: np.ndarray) -> Any:
    """test_loop11's body: carried y += table[i:i+1], the new y also scanned; cond passed on.
    Below opset 13 Unsqueeze's axes are an attribute (and torch-mlir converts none of a scalar)."""
    if opset >= 13:
        unsqueeze = [_ints("axes", [0]),
                     helper.make_node("Unsqueeze", ["i", "axes"], ["start"]),
                     helper.make_node("Unsqueeze", ["i1", "axes"], ["end"])]
    else:
        # torch-mlir converts no opset-11 Unsqueeze of a scalar: a Reshape to [1] instead
        unsqueeze = [_const("shape", np.array([1], np.int64)),
                     helper.make_node("Reshape", ["i", "shape"], ["start"]),
                     helper.make_node("Reshape", ["i1", "shape"], ["end"])]
    nodes = [helper.make_node("Identity", ["cond"], ["cond_out"]), _const("table", table),
             _ints("one", 1) if opset >= 12 else _const("one", np.array(1, np.int64)),
             helper.make_node("Add", ["i", "one"], ["i1"]), *unsqueeze,
             helper.make_node("Slice", ["table", "start", "end"], ["row"]),
             helper.make_node("Add", ["y", "row"], ["y_out"]), helper.make_node("Identity", ["y_out"], ["scan"])]
    return _graph("slice_body", nodes, [("i", I64, []), ("cond", B, []), ("y", F, [1])],
                  [("cond_out", B, []), ("y_out", F, [1]), ("scan", F, [1])], opset=opset)


def _counting_body(stop: int, dtype: int) -> Any:
    """Three carried values of ``dtype`` (a running product, a sum, a factor passed on) and
    two scans; the product reads the factor from the enclosing graph (input x4, a capture);
    the condition becomes false once the iteration number reaches ``stop``."""
    nodes = [_ints("stop", stop), helper.make_node("Less", ["i", "stop"], ["cond_out"]),
             helper.make_node("Mul", ["a", "x4"], ["a_out"]), helper.make_node("Add", ["b", "a"], ["b_out"]),
             helper.make_node("Identity", ["w"], ["w_out"]),
             helper.make_node("Identity", ["a_out"], ["scan_a"]), helper.make_node("Neg", ["b_out"], ["scan_b"])]
    return _graph("counting_body", nodes,
                  [("i", I64, []), ("cond", B, []), ("a", dtype, [3]), ("b", dtype, [3]), ("w", dtype, [3])],
                  [("cond_out", B, []), ("a_out", dtype, [3]), ("b_out", dtype, [3]), ("w_out", dtype, [3]),
                   ("scan_a", dtype, [3]), ("scan_b", dtype, [3])], outer=(("x4", dtype, [3]),))


def _branching_body() -> Any:
    """An If in the body whose condition depends on the iteration number, known once unrolled;
    its branches read a body value (y) and the enclosing graph's input x3 (captures)."""
    outer = (("y", F, [4]), ("x3", F, [4]))
    then = _graph("then", [helper.make_node("Add", ["y", "x3"], ["t"])], [], [("t", F, [4])], outer)
    other = _graph("else", [helper.make_node("Mul", ["y", "x3"], ["t"])], [], [("t", F, [4])], outer)
    nodes = [_ints("two", 2), helper.make_node("Less", ["i", "two"], ["early"]),
             helper.make_node("If", ["early"], ["y_out"], then_branch=then, else_branch=other),
             helper.make_node("Identity", ["cond"], ["cond_out"]), helper.make_node("Identity", ["w"], ["w_out"]),
             helper.make_node("Sub", ["y_out", "w"], ["scan"])]
    return _graph("branching_body", nodes, [("i", I64, []), ("cond", B, []), ("y", F, [4]), ("w", F, [4])],
                  [("cond_out", B, []), ("y_out", F, [4]), ("w_out", F, [4]), ("scan", F, [4])],
                  outer=(("x3", F, [4]),))


def test_loop_against_the_reference(pytester: pytest.Pytester, run_items) -> None:
    rng = np.random.default_rng(17)
    table = rng.standard_normal(8).astype(np.float32)
    y0 = rng.standard_normal(1).astype(np.float32)
    yes = np.array(True)
    w = rng.standard_normal(3).astype(np.float32)
    a0, b0 = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    ints = [rng.integers(-3, 4, 3).astype(np.int32) for _ in range(3)]
    w4, y4 = rng.standard_normal(4).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    cases = [
        Case("loop_scan_opset17", "Loop", [np.array(5, np.int64), yes, y0], {"body": _slice_body(17, table[:5])},
             outputs=2, opset=17),
        Case("loop_scan_opset13", "Loop", [np.array(7, np.int64), yes, y0], {"body": _slice_body(13, table[:7])},
             outputs=2, opset=13),
        Case("loop_one_iteration", "Loop", [np.array(1, np.int64), yes, y0], {"body": _slice_body(21, table)},
             outputs=2, opset=21),
        Case("loop_stops_early", "Loop", [np.array(10, np.int64), yes, a0, b0, w],
             {"body": _counting_body(3, F)}, outputs=5, opset=13),
        Case("loop_trip_count_first", "Loop", [np.array(2, np.int64), yes, ints[0], ints[1], ints[2]],
             {"body": _counting_body(6, I32)}, outputs=5, opset=19),
        Case("loop_no_trip_count", "Loop", [None, yes, a0, b0, w], {"body": _counting_body(4, F)}, outputs=5,
             opset=16),
        Case("loop_nested_if", "Loop", [np.array(4, np.int64), yes, y4, w4], {"body": _branching_body()},
             outputs=3, opset=21),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))


def test_loop_whose_condition_is_known_at_run_time_only(pytester: pytest.Pytester, run_items) -> None:
    """The body's condition compares with a float carried value (never baked in): the scan
    output's static length (5, from the model's shapes) says how many iterations ran."""
    body = _graph("until", [helper.make_node("Cast", ["i"], ["fi"], to=onnx.TensorProto.FLOAT),
                            helper.make_node("Less", ["fi", "limit"], ["cond_out"]),
                            helper.make_node("Add", ["y", "fi"], ["y_out"]),
                            helper.make_node("Identity", ["limit"], ["limit_out"]),
                            helper.make_node("Identity", ["y_out"], ["scan"])],
                  [("i", I64, []), ("cond", B, []), ("y", F, [2]), ("limit", F, [])],
                  [("cond_out", B, []), ("y_out", F, [2]), ("limit_out", F, []), ("scan", F, [2])])
    y0 = np.array([0.5, -1.0], np.float32)
    cases = [Case("loop_until_float", "Loop", [np.array(10, np.int64), np.array(True), y0, np.array(3.5, np.float32)],
                  {"body": body}, outputs=3, opset=17)]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))


def test_loop_without_iterations_against_the_reference(pytester: pytest.Pytester, run_items) -> None:
    """No iteration (a zero trip count): the carried values come out as they went in (no scan
    output: the reference cannot stack an empty list). Carried values only: torch-mlir converts
    these itself where the trip count is a run-time input, the unrolling on the retry."""
    rng = np.random.default_rng(19)
    a0, b0 = (rng.standard_normal(3).astype(np.float32) for _ in range(2))
    body = _graph("carried", [helper.make_node("Identity", ["cond"], ["cond_out"]),
                              helper.make_node("Mul", ["a", "a"], ["a_out"]),
                              helper.make_node("Add", ["b", "a"], ["b_out"])],
                  [("i", I64, []), ("cond", B, []), ("a", F, [3]), ("b", F, [3])],
                  [("cond_out", B, []), ("a_out", F, [3]), ("b_out", F, [3])])
    cases = [
        Case("loop_zero_trip_count", "Loop", [np.array(0, np.int64), np.array(True), a0, b0], {"body": body},
             outputs=2, opset=13),
        Case("loop_carried_only", "Loop", [np.array(3, np.int64), np.array(True), a0, b0], {"body": body},
             outputs=2, opset=11),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))


def test_if_against_the_reference(pytester: pytest.Pytester, run_items) -> None:
    """A condition baked in on the retry; branches of different shapes and types of their own
    (the output's declared type is the taken branch's). Captures: test_loop's nested If."""
    rng = np.random.default_rng(23)
    table = rng.standard_normal((2, 3)).astype(np.float32)
    row = rng.standard_normal(3).astype(np.float32)
    then = _graph("then", [_const("c", table), helper.make_node("Shape", ["c"], ["shape"]),
                           helper.make_node("Mul", ["c", "c"], ["t"])],
                  [], [("t", F, [2, 3]), ("shape", I64, [2])])
    other = _graph("else", [_const("c", row), helper.make_node("Shape", ["c"], ["shape"]),
                            helper.make_node("Neg", ["c"], ["t"])], [], [("t", F, [3]), ("shape", I64, [1])])
    cases = [
        Case("if_true", "If", [np.array(True)], {"then_branch": then, "else_branch": other}, outputs=2, opset=13),
        Case("if_false", "If", [np.array(False)], {"then_branch": then, "else_branch": other}, outputs=2,
             opset=13),
        Case("if_one_element_true", "If", [np.array([True])], {"then_branch": then, "else_branch": other},
             outputs=2, opset=21),
        Case("if_false_opset11", "If", [np.array(False)], {"then_branch": then, "else_branch": other}, outputs=2,
             opset=11),
    ]
    # the condition is baked in on the retry and both branches are constants: nothing depends on
    # a value given at run time, so each is compared and skipped as computed at compile time
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases), folded=frozenset(
        {"if_true", "if_false", "if_one_element_true", "if_false_opset11"}))
