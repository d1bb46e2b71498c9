"""Dynamic StableHLO programs as JAX exports them (shape polymorphism: dynamic dimensions,
and leading 0-d integer arguments that are their sizes), refined to static shapes before
lowering (worker/lowering/shlo/refine.py) and judged against the StableHLO interpreter,
which is given the same inputs, over several sizes (--mlir-dynamic-dim) and seeds."""

from __future__ import annotations

import numpy as np
import pytest

# each function: its dimension arguments first (%b, %n), then the data
DYNAMIC = """func.func @broadcast_add(%b: tensor<i64>, %x: tensor<?x4xf32>, %y: tensor<2x?x4xf32>)
    -> tensor<2x?x4xf32> {
  %two = stablehlo.constant dense<2> : tensor<1xi32>
  %four = stablehlo.constant dense<4> : tensor<1xi32>
  %0 = stablehlo.convert %b : (tensor<i64>) -> tensor<i32>
  %1 = stablehlo.reshape %0 : (tensor<i32>) -> tensor<1xi32>
  %shape = stablehlo.concatenate %two, %1, %four, dim = 0
      : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
  %2 = stablehlo.dynamic_broadcast_in_dim %x, %shape, dims = [1, 2]
      : (tensor<?x4xf32>, tensor<3xi32>) -> tensor<2x?x4xf32>
  %3 = stablehlo.add %2, %y : tensor<2x?x4xf32>
  return %3 : tensor<2x?x4xf32>
}
func.func @flatten_iota(%b: tensor<i64>, %n: tensor<i32>, %x: tensor<?x?xf32>) -> tensor<?xf32> {
  %0 = stablehlo.convert %b : (tensor<i64>) -> tensor<i32>
  %1 = stablehlo.multiply %0, %n : tensor<i32>
  %s = stablehlo.reshape %1 : (tensor<i32>) -> tensor<1xi32>
  %2 = stablehlo.dynamic_reshape %x, %s : (tensor<?x?xf32>, tensor<1xi32>) -> tensor<?xf32>
  %3 = stablehlo.dynamic_iota %s, dim = 0 : (tensor<1xi32>) -> tensor<?xf32>
  %4 = stablehlo.add %2, %3 : tensor<?xf32>
  return %4 : tensor<?xf32>
}
func.func @slice_tail(%b: tensor<i64>, %x: tensor<?x4xf32>) -> tensor<?x2xf32> {
  %start = stablehlo.constant dense<[1, 0]> : tensor<2xi32>
  %strides = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %four = stablehlo.constant dense<4> : tensor<1xi32>
  %0 = stablehlo.convert %b : (tensor<i64>) -> tensor<i32>
  %1 = stablehlo.reshape %0 : (tensor<i32>) -> tensor<1xi32>
  %limit = stablehlo.concatenate %1, %four, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %2 = stablehlo.real_dynamic_slice %x, %start, %limit, %strides
      : (tensor<?x4xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?x2xf32>
  return %2 : tensor<?x2xf32>
}
func.func @pad_by_size(%b: tensor<i64>, %x: tensor<?x3xi32>) -> tensor<?x5xi32> {
  %zero = stablehlo.constant dense<-1> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<1xi32>
  %none = stablehlo.constant dense<0> : tensor<2xi32>
  %0 = stablehlo.convert %b : (tensor<i64>) -> tensor<i32>
  %1 = stablehlo.reshape %0 : (tensor<i32>) -> tensor<1xi32>
  %low = stablehlo.concatenate %1, %one, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %2 = stablehlo.dynamic_pad %x, %zero, %low, %low, %none
      : (tensor<?x3xi32>, tensor<i32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?x5xi32>
  return %2 : tensor<?x5xi32>
}
func.func @window_sums(%b: tensor<i64>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %zero) <{padding = dense<[[1, 0], [0, 0]]> : tensor<2x2xi64>,
                                               window_dimensions = array<i64: 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %c: tensor<f32>):
    %s = stablehlo.add %a, %c : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
func.func @scatter_rows(%b: tensor<i64>, %x: tensor<?x3xf32>, %i: tensor<?x1xi32>, %u: tensor<?x3xf32>)
    -> tensor<?x3xf32> {
  %0 = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1],
      inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%old: tensor<f32>, %new: tensor<f32>):
    %s = stablehlo.add %old, %new : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<?x3xf32>, tensor<?x1xi32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
func.func @scaled_by_size(%b: tensor<i64>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %d = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
  %f = stablehlo.convert %d : (tensor<i32>) -> tensor<f32>
  %four = stablehlo.constant dense<4> : tensor<1xi32>
  %0 = stablehlo.convert %b : (tensor<i64>) -> tensor<i32>
  %1 = stablehlo.reshape %0 : (tensor<i32>) -> tensor<1xi32>
  %shape = stablehlo.concatenate %1, %four, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %2 = stablehlo.dynamic_broadcast_in_dim %f, %shape, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x4xf32>
  %3 = stablehlo.multiply %x, %2 : tensor<?x4xf32>
  return %3 : tensor<?x4xf32>
}
func.func @row_at(%b: tensor<i64>, %x: tensor<?x4xf32>, %i: tensor<i32>) -> tensor<1x4xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.dynamic_slice %x, %i, %zero, sizes = [1, 4]
      : (tensor<?x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}
func.func @through_callee(%b: tensor<i64>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = func.call @twice(%b, %x) : (tensor<i64>, tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
func.func private @twice(%b: tensor<i64>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = stablehlo.convert %b : (tensor<i64>) -> tensor<i32>
  %s = stablehlo.reshape %0 : (tensor<i32>) -> tensor<1xi32>
  %1 = stablehlo.dynamic_iota %s, dim = 0 : (tensor<1xi32>) -> tensor<?xf32>
  %2 = stablehlo.add %x, %x : tensor<?xf32>
  %3 = stablehlo.add %2, %1 : tensor<?xf32>
  return %3 : tensor<?xf32>
}
"""
FUNCTIONS = ["broadcast_add", "flatten_iota", "slice_tail", "pad_by_size", "window_sums", "scatter_rows",
             "scaled_by_size", "row_at", "through_callee"]
# shapes computed from a data-dependent value: no refinement makes them static
DATA_DEPENDENT = """func.func @main(%b: tensor<i64>, %x: tensor<?x4xf32>, %i: tensor<i32>) -> tensor<?x4xf32> {
  %0 = stablehlo.convert %b : (tensor<i64>) -> tensor<i32>
  %1 = stablehlo.add %i, %0 : tensor<i32>
  %i1 = stablehlo.reshape %i : (tensor<i32>) -> tensor<1xi32>
  %l1 = stablehlo.reshape %1 : (tensor<i32>) -> tensor<1xi32>
  %zero = stablehlo.constant dense<0> : tensor<1xi32>
  %four = stablehlo.constant dense<4> : tensor<1xi32>
  %start = stablehlo.concatenate %i1, %zero, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %limit = stablehlo.concatenate %l1, %four, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %one = stablehlo.constant dense<1> : tensor<2xi32>
  %2 = stablehlo.real_dynamic_slice %x, %start, %limit, %one
      : (tensor<?x4xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?x4xf32>
  return %2 : tensor<?x4xf32>
}
"""
# static programs that compute their shapes from constants, and empty slices and pads
# (a size of 1 makes them: x[1:b])
STATIC = """func.func @reshape_iota(%x: tensor<2x6xf32>) -> tensor<3x4xf32> {
  %s = stablehlo.constant dense<[3, 4]> : tensor<2xi32>
  %0 = stablehlo.dynamic_reshape %x, %s : (tensor<2x6xf32>, tensor<2xi32>) -> tensor<?x4xf32>
  %1 = stablehlo.dynamic_iota %s, dim = 1 : (tensor<2xi32>) -> tensor<3x?xf32>
  %2 = stablehlo.add %0, %1 : (tensor<?x4xf32>, tensor<3x?xf32>) -> tensor<3x4xf32>
  return %2 : tensor<3x4xf32>
}
func.func @empty_slice(%x: tensor<1x5xf32>, %y: tensor<0x5xf32>) -> tensor<1x5xf32> {
  %0 = stablehlo.slice %x [1:1, 0:5] : (tensor<1x5xf32>) -> tensor<0x5xf32>
  %1 = stablehlo.add %0, %y : tensor<0x5xf32>
  %2 = stablehlo.concatenate %1, %x, dim = 0 : (tensor<0x5xf32>, tensor<1x5xf32>) -> tensor<1x5xf32>
  return %2 : tensor<1x5xf32>
}
func.func @pad_of_nothing(%x: tensor<0x3xf32>, %v: tensor<f32>) -> tensor<2x5xf32> {
  %0 = stablehlo.pad %x, %v, low = [1, 1], high = [1, 1], interior = [2, 0]
      : (tensor<0x3xf32>, tensor<f32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}
"""


def outcomes(props: dict[str, dict[str, str]]) -> dict[str, str]:
    return {node: p.get("mlir_kind", p["outcome"]) for node, p in props.items()}


@pytest.mark.parametrize(("size", "seed"), [(1, 0), (3, 1), (4, 2), (6, 3)])
def test_dynamic_programs_against_the_interpreter(pytester: pytest.Pytester, run_items, size: int,
                                                  seed: int) -> None:
    pytester.makefile(".mlir", dynamic=DYNAMIC)
    _, props = run_items(f"--mlir-dynamic-dim={size}", f"--mlir-seed={seed}")
    assert set(outcomes(props).values()) == {"pass"} and len(props) == 2 * len(FUNCTIONS), outcomes(props)
    executed = {node: p for node, p in props.items() if node.endswith("[execute]")}
    assert {p["mlir_reference"] for p in executed.values()} == {"StableHLO reference interpreter"}
    inputs = executed["dynamic.mlir::flatten_iota[execute]"]["mlir_inputs"]
    assert inputs == str([f"tensor<i64> = {size} (dimension size)", f"tensor<i32> = {size} (dimension size)",
                          f"tensor<{size}x{size}xf32>"])  # what was compiled: static
    assert executed["dynamic.mlir::row_at[execute]"]["mlir_inputs"].endswith("'tensor<i32>']")  # data, not a size


def test_refined_programs_compute_what_numpy_does() -> None:
    """The refinement is shared by the compile and the interpreter: checked against numpy too."""
    from pytest_mlir_snippets.golden.inputs import make_inputs
    from pytest_mlir_snippets.mlirtext.splitter import SnippetSource
    from pytest_mlir_snippets.protocol import Options
    from pytest_mlir_snippets.worker.lowering.shlo.refine import dynamic_dim
    from pytest_mlir_snippets.worker.targets.cpu import CpuBackend

    backend = CpuBackend()
    source = SnippetSource(DYNAMIC)
    modules = {fn.name: source.split(fn).text for fn in source.functions}  # a module per function, as items get

    def run(name: str, size: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
        with dynamic_dim(size):  # what the worker sets from the request's options
            compiled = backend.compile(modules[name], name, Options(dynamic_dim=size))
        inputs = make_inputs(compiled.signature[0], size, size)
        return inputs, backend._run(compiled, inputs)

    for size in (1, 2, 5):
        (b, x, y), (out,) = run("broadcast_add", size)
        assert int(b) == size and x.shape == (size, 4) and np.array_equal(out, x[None] + y)
        (_, _, x), (out,) = run("flatten_iota", size)
        assert np.allclose(out, x.reshape(-1) + np.arange(size * size))
        (_, x), (out,) = run("slice_tail", size)
        assert out.shape == (size - 1, 2) and np.array_equal(out, x[1:, ::2])
        (_, x), (out,) = run("pad_by_size", size)
        assert np.array_equal(out, np.pad(x, ((size, size), (1, 1)), constant_values=-1))
        (_, x), (out,) = run("window_sums", size)
        assert np.allclose(out, x + np.concatenate([np.zeros((1, 4), np.float32), x[:-1]]))
        (_, x), (out,) = run("scaled_by_size", size)
        assert np.allclose(out, x * size)
        (_, x), (out,) = run("through_callee", size)
        assert np.allclose(out, 2 * x + np.arange(size))


def test_the_interpreter_refines_to_the_inputs_it_is_given() -> None:
    """Shapes and sizes come from the inputs, whatever the compile's size was; a dynamic
    result no longer aborts the process."""
    from pytest_mlir_snippets.worker.judging.interpreter import interpret
    from pytest_mlir_snippets.worker.lowering.shlo.refine import dynamic_dim

    x = np.arange(20, dtype=np.float32).reshape(5, 4)
    with dynamic_dim(2):
        (out,) = interpret(DYNAMIC, "slice_tail", [np.array(5), x], "cpu")
        (twice,) = interpret(DYNAMIC, "through_callee", [np.array(3), np.ones(3, np.float32)], "cpu")
    assert np.array_equal(out, x[1:, ::2])
    assert np.array_equal(twice, [2, 3, 4])


def test_data_dependent_shapes_are_a_compile_error_at_their_line(pytester: pytest.Pytester, run_items) -> None:
    pytester.makefile(".mlir", data_dependent=DATA_DEPENDENT)
    _, props = run_items()
    compile_ = props["data_dependent.mlir::main[compile]"]
    assert compile_["mlir_kind"] == "compile-error"
    assert "data_dependent.mlir:11:8: error: 'stablehlo.real_dynamic_slice' still has a dynamic result: " \
           "tensor<?x4xf32>" in compile_["mlir_diagnostics"]
    assert props["data_dependent.mlir::main[execute]"]["outcome"] == "skipped"


def test_static_programs_with_shape_computations_and_empty_slices(pytester: pytest.Pytester, run_items) -> None:
    pytester.makefile(".mlir", static=STATIC)
    _, props = run_items()
    assert set(outcomes(props).values()) == {"pass"} and len(props) == 6, outcomes(props)
    assert {p["mlir_reference"] for node, p in props.items() if node.endswith("[execute]")} == {
        "StableHLO reference interpreter"}
