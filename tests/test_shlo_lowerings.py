"""The StableHLO ops lowered by worker/lowering/shlo/, each against the StableHLO
reference interpreter on random inputs (seeded) over several shapes and forms."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import item_properties

# the seeds each file runs under; one pytest run per seed runs every file of that seed
SEEDS = {"scatter": [0, 1, 2], "control": [0, 1, 2, 3], "sort": [0, 1, 2], "batch_norm": [0, 1],
         "select_and_scatter": [0, 1, 2]}
Props = Callable[[str, int], dict[str, dict[str, str]]]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Props:
    """``seeded(stem, seed)``: the junit properties of the items of ``stem.mlir`` run with
    ``--mlir-seed=seed``, from a pytest run of the files of that seed made once (each run
    starts a worker and the interpreter's process: one for all files)."""
    runs: dict[int, dict[str, dict[str, str]]] = {}

    def props(stem: str, seed: int) -> dict[str, dict[str, str]]:
        if seed not in runs:
            folder = tmp_path_factory.mktemp(f"seed{seed}")
            files = [name for name, seeds in SEEDS.items() if seed in seeds]
            for name in files:
                (folder / f"{name}.mlir").write_text(TEXTS[name]())
            xml = folder / "junit.xml"
            subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--junitxml={xml}",
                            f"--mlir-seed={seed}", *(f"{name}.mlir" for name in files)],
                           cwd=folder, capture_output=True, check=False)
            runs[seed] = item_properties(xml) if xml.exists() else {}
        return {node: p for node, p in runs[seed].items() if Path(node.split("::")[0]).stem == stem}

    return props

SCATTER = """func.func @{name}(%operand: tensor<{operand}>, %indices: tensor<{indices}>,
                      %updates: tensor<{updates}>) -> tensor<{operand}> {{
  %0 = "stablehlo.scatter"(%operand, %indices, %updates) <{{scatter_dimension_numbers = #stablehlo.scatter<{dims}>,
      indices_are_sorted = false, unique_indices = false}}> ({{
  ^bb0(%old: tensor<{element}>, %new: tensor<{element}>):
    {body}
  }}) : (tensor<{operand}>, tensor<{indices}>, tensor<{updates}>) -> tensor<{operand}>
  return %0 : tensor<{operand}>
}}
"""
ADD = "%r = stablehlo.add %old, %new : tensor<{element}>\n    stablehlo.return %r : tensor<{element}>"
MAX = "%r = stablehlo.maximum %old, %new : tensor<{element}>\n    stablehlo.return %r : tensor<{element}>"
REPLACE = "stablehlo.return %new : tensor<{element}>"
# (name, operand, indices, updates, dimension numbers, body); indices are random in [-8, 8], so
# some updates land out of bounds (skipped per element) and some collide (applied in order)
SCATTERS = [
    ("rows", "6x3xf32", "4x1xi32", "4x3xf32",
     "update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1",
     ADD),
    ("points_max", "9x8xi32", "5x2xi64", "5xi32",
     "inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1", MAX),
    ("partial_windows", "5x6x7xf32", "2x1xi32", "2x3x4xf32",
     "update_window_dims = [1, 2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0],"
     " index_vector_dim = 1", ADD),
    ("window_offsets", "8x8xf64", "3x2xi32", "3x2x3xf64",
     "update_window_dims = [1, 2], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 1", REPLACE),
    ("vector_dim_first", "7x5xui8", "2x3xi32", "3xui8",
     "inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 0", MAX),
    ("implicit_vector_dim", "9xbf16", "4xi32", "4xbf16",
     "inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1", ADD),
    ("scalar_update", "6xi1", "1xi32", "i1",
     "inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 0", REPLACE),
    ("batching", "3x9x4xf32", "3x2x1xi32", "3x2x4xf32",
     "update_window_dims = [2], inserted_window_dims = [1], input_batching_dims = [0],"
     " scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1], index_vector_dim = 2", ADD),
]
VARIADIC = """func.func @variadic(%a: tensor<6x4xf32>, %b: tensor<6x4xi32>, %i: tensor<3x1xi32>, %ua: tensor<3x4xf32>,
                    %ub: tensor<3x4xi32>) -> (tensor<6x4xf32>, tensor<6x4xi32>) {
  %0:2 = "stablehlo.scatter"(%a, %b, %i, %ua, %ub) <{scatter_dimension_numbers = #stablehlo.scatter<
      update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0],
      index_vector_dim = 1>}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<i32>, %u: tensor<f32>, %v: tensor<i32>):
    %s = stablehlo.multiply %x, %u : tensor<f32>
    %t = stablehlo.subtract %y, %v : tensor<i32>
    stablehlo.return %s, %t : tensor<f32>, tensor<i32>
  }) : (tensor<6x4xf32>, tensor<6x4xi32>, tensor<3x1xi32>, tensor<3x4xf32>, tensor<3x4xi32>)
     -> (tensor<6x4xf32>, tensor<6x4xi32>)
  return %0#0, %0#1 : tensor<6x4xf32>, tensor<6x4xi32>
}
"""


def scatter_snippets() -> str:
    out = []
    for name, operand, indices, updates, dims, body in SCATTERS:
        element = operand.split("x")[-1]
        out.append(SCATTER.format(name=name, operand=operand, indices=indices, updates=updates, dims=dims,
                                  element=element, body=body.format(element=element)))
    return "\n".join(out) + VARIADIC


@pytest.mark.parametrize("seed", SEEDS["scatter"])
def test_scatter_against_the_interpreter(seeded: Props, seed: int) -> None:
    props = seeded("scatter", seed)
    failed = {node: p.get("mlir_kind", p["outcome"]) for node, p in props.items() if p["outcome"] != "passed"}
    assert not failed and len(props) == 2 * (len(SCATTERS) + 1), failed
    assert {p["mlir_reference"] for node, p in props.items() if node.endswith("[execute]")} == {
        "StableHLO reference interpreter"}


CONTROL = """func.func @while_power(%x: tensor<4xf32>, %n: tensor<i32>) -> (tensor<4xf32>, tensor<i32>) {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %0:3 = stablehlo.while(%i = %zero, %acc = %x, %m = %n) : tensor<i32>, tensor<4xf32>, tensor<i32>
    cond {
    %c = stablehlo.compare LT, %i, %m, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %j = stablehlo.add %i, %one : tensor<i32>
    %a = stablehlo.multiply %acc, %x : tensor<4xf32>
    stablehlo.return %j, %a, %m : tensor<i32>, tensor<4xf32>, tensor<i32>
  }
  return %0#1, %0#0 : tensor<4xf32>, tensor<i32>
}
func.func @nested_while(%x: tensor<2x3xui32>) -> tensor<2x3xui32> {
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %three = stablehlo.constant dense<3> : tensor<i64>
  %0:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i64>, tensor<2x3xui32>
    cond {
    %c = stablehlo.compare LT, %i, %three, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %1:2 = stablehlo.while(%k = %zero, %b = %acc) : tensor<i64>, tensor<2x3xui32>
      cond {
      %c = stablehlo.compare LT, %k, %i, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %k1 = stablehlo.add %k, %one : tensor<i64>
      %b1 = stablehlo.add %b, %x : tensor<2x3xui32>
      stablehlo.return %k1, %b1 : tensor<i64>, tensor<2x3xui32>
    }
    %j = stablehlo.add %i, %one : tensor<i64>
    stablehlo.return %j, %1#1 : tensor<i64>, tensor<2x3xui32>
  }
  return %0#1 : tensor<2x3xui32>
}
func.func @if_else(%p: tensor<i1>, %x: tensor<3xf64>, %y: tensor<3xf64>) -> (tensor<3xf64>, tensor<i1>) {
  %0:2 = "stablehlo.if"(%p) ({
    %a = stablehlo.add %x, %y : tensor<3xf64>
    stablehlo.return %a, %p : tensor<3xf64>, tensor<i1>
  }, {
    %b = stablehlo.subtract %x, %y : tensor<3xf64>
    %n = stablehlo.not %p : tensor<i1>
    stablehlo.return %b, %n : tensor<3xf64>, tensor<i1>
  }) : (tensor<i1>) -> (tensor<3xf64>, tensor<i1>)
  return %0#0, %0#1 : tensor<3xf64>, tensor<i1>
}
func.func @if_on_compare(%x: tensor<bf16>, %y: tensor<2x2xbf16>) -> tensor<2x2xbf16> {
  %zero = stablehlo.constant dense<0.0> : tensor<bf16>
  %p = stablehlo.compare GT, %x, %zero : (tensor<bf16>, tensor<bf16>) -> tensor<i1>
  %0 = "stablehlo.if"(%p) ({
    %a = stablehlo.negate %y : tensor<2x2xbf16>
    stablehlo.return %a : tensor<2x2xbf16>
  }, {
    stablehlo.return %y : tensor<2x2xbf16>
  }) : (tensor<i1>) -> tensor<2x2xbf16>
  return %0 : tensor<2x2xbf16>
}
func.func @case_three(%i: tensor<i32>, %x: tensor<5xi16>) -> tensor<5xi16> {
  %0 = "stablehlo.case"(%i) ({
    %a = stablehlo.negate %x : tensor<5xi16>
    stablehlo.return %a : tensor<5xi16>
  }, {
    %b = stablehlo.multiply %x, %x : tensor<5xi16>
    stablehlo.return %b : tensor<5xi16>
  }, {
    stablehlo.return %x : tensor<5xi16>
  }) : (tensor<i32>) -> tensor<5xi16>
  return %0 : tensor<5xi16>
}
"""


@pytest.mark.parametrize("seed", SEEDS["control"])
def test_control_flow_against_the_interpreter(seeded: Props, seed: int) -> None:
    """Random predicates, loop counts and case indices in [-8, 8]: out of range too."""
    props = seeded("control", seed)
    failed = {node: p.get("mlir_kind", p["outcome"]) for node, p in props.items() if p["outcome"] != "passed"}
    assert not failed and len(props) == 10, failed
    assert {p["mlir_reference"] for node, p in props.items() if node.endswith("[execute]")} == {
        "StableHLO reference interpreter"}


SORT = """func.func @ascending_rows(%x: tensor<4x7xf32>) -> tensor<4x7xf32> {
  %0 = "stablehlo.sort"(%x) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) : (tensor<4x7xf32>) -> tensor<4x7xf32>
  return %0 : tensor<4x7xf32>
}
func.func @descending_columns_stable_values(%k: tensor<9x3xi32>, %v: tensor<9x3xf64>)
    -> (tensor<9x3xi32>, tensor<9x3xf64>) {
  %0:2 = "stablehlo.sort"(%k, %v) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<f64>, %d: tensor<f64>):
    %g = stablehlo.compare GT, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %g : tensor<i1>
  }) : (tensor<9x3xi32>, tensor<9x3xf64>) -> (tensor<9x3xi32>, tensor<9x3xf64>)
  return %0#0, %0#1 : tensor<9x3xi32>, tensor<9x3xf64>
}
func.func @lexicographic_middle(%k: tensor<2x6x3xui16>, %l: tensor<2x6x3xbf16>)
    -> (tensor<2x6x3xui16>, tensor<2x6x3xbf16>) {
  %0:2 = "stablehlo.sort"(%k, %l) <{dimension = 1 : i64, is_stable = false}> ({
  ^bb0(%a: tensor<ui16>, %b: tensor<ui16>, %c: tensor<bf16>, %d: tensor<bf16>):
    %lt = stablehlo.compare LT, %a, %b, UNSIGNED : (tensor<ui16>, tensor<ui16>) -> tensor<i1>
    %eq = stablehlo.compare EQ, %a, %b, UNSIGNED : (tensor<ui16>, tensor<ui16>) -> tensor<i1>
    %lt2 = stablehlo.compare LT, %c, %d, TOTALORDER : (tensor<bf16>, tensor<bf16>) -> tensor<i1>
    %t = stablehlo.and %eq, %lt2 : tensor<i1>
    %r = stablehlo.or %lt, %t : tensor<i1>
    stablehlo.return %r : tensor<i1>
  }) : (tensor<2x6x3xui16>, tensor<2x6x3xbf16>) -> (tensor<2x6x3xui16>, tensor<2x6x3xbf16>)
  return %0#0, %0#1 : tensor<2x6x3xui16>, tensor<2x6x3xbf16>
}
func.func @one_element(%x: tensor<1xi8>) -> tensor<1xi8> {
  %0 = "stablehlo.sort"(%x) <{dimension = 0 : i64}> ({
  ^bb0(%a: tensor<i8>, %b: tensor<i8>):
    %c = stablehlo.compare LT, %a, %b, SIGNED : (tensor<i8>, tensor<i8>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) : (tensor<1xi8>) -> tensor<1xi8>
  return %0 : tensor<1xi8>
}
"""


@pytest.mark.parametrize("seed", SEEDS["sort"])
def test_sort_against_the_interpreter(seeded: Props, seed: int) -> None:
    """Keys with ties (small random integers): the values show the sort is stable."""
    props = seeded("sort", seed)
    failed = {node: p.get("mlir_kind", p["outcome"]) for node, p in props.items() if p["outcome"] != "passed"}
    assert not failed and len(props) == 8, failed
    assert {p["mlir_reference"] for node, p in props.items() if node.endswith("[execute]")} == {
        "StableHLO reference interpreter"}


BATCH_NORM = """func.func @inference(%x: tensor<2x3x4xf32>, %scale: tensor<3xf32>, %offset: tensor<3xf32>,
                     %mean: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4xf32> {
  %variance = stablehlo.multiply %v, %v : tensor<3xf32>
  %0 = "stablehlo.batch_norm_inference"(%x, %scale, %offset, %mean, %variance)
      <{epsilon = 1.0e-3 : f32, feature_index = 1 : i64}>
      : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
func.func @training_last(%x: tensor<5x2x6xf64>, %scale: tensor<6xf64>, %offset: tensor<6xf64>)
    -> (tensor<5x2x6xf64>, tensor<6xf64>, tensor<6xf64>) {
  %0:3 = "stablehlo.batch_norm_training"(%x, %scale, %offset) <{epsilon = 1.0e-5 : f32, feature_index = 2 : i64}>
      : (tensor<5x2x6xf64>, tensor<6xf64>, tensor<6xf64>) -> (tensor<5x2x6xf64>, tensor<6xf64>, tensor<6xf64>)
  return %0#0, %0#1, %0#2 : tensor<5x2x6xf64>, tensor<6xf64>, tensor<6xf64>
}
func.func @grad_first(%x: tensor<4x3xf32>, %scale: tensor<4xf32>, %mean: tensor<4xf32>, %v: tensor<4xf32>,
                      %dy: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4xf32>, tensor<4xf32>) {
  %variance = stablehlo.multiply %v, %v : tensor<4xf32>
  %0:3 = "stablehlo.batch_norm_grad"(%x, %scale, %mean, %variance, %dy) <{epsilon = 0.5 : f32, feature_index = 0 : i64}>
      : (tensor<4x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x3xf32>)
      -> (tensor<4x3xf32>, tensor<4xf32>, tensor<4xf32>)
  return %0#0, %0#1, %0#2 : tensor<4x3xf32>, tensor<4xf32>, tensor<4xf32>
}
"""


@pytest.mark.parametrize("seed", SEEDS["batch_norm"])
def test_batch_norm_against_the_interpreter(seeded: Props, seed: int) -> None:
    props = seeded("batch_norm", seed)
    failed = {node: p.get("mlir_kind", p["outcome"]) for node, p in props.items() if p["outcome"] != "passed"}
    assert not failed and len(props) == 6, failed
    assert {p["mlir_reference"] for node, p in props.items() if node.endswith("[execute]")} == {
        "StableHLO reference interpreter"}


def test_batch_norm_matches_its_formulas() -> None:
    """The interpreter does not evaluate batch norm ops (it is given the same expansion),
    so the expansion is checked against the formulas in numpy too."""
    import numpy as np

    from pytest_mlir_snippets.golden.inputs import make_inputs
    from pytest_mlir_snippets.protocol import Options
    from pytest_mlir_snippets.worker.targets.cpu import CpuBackend

    backend = CpuBackend()

    def run(name: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
        compiled = backend.compile(BATCH_NORM, name, Options())
        inputs = make_inputs(compiled.signature[0], 3, 4)
        return [v.astype(np.float64) for v in inputs], backend._run(compiled, inputs)

    (x, scale, offset, mean, v), (out,) = run("inference")
    along = (None, slice(None), None)
    want = scale[along] * (x - mean[along]) / np.sqrt(v[along] ** 2 + 1e-3) + offset[along]
    assert np.allclose(out, want, rtol=1e-4, atol=1e-4)
    (x, scale, offset), (out, got_mean, got_var) = run("training_last")
    mean, var = x.mean(axis=(0, 1)), x.var(axis=(0, 1))
    assert np.allclose(got_mean, mean) and np.allclose(got_var, var)
    assert np.allclose(out, scale * (x - mean) / np.sqrt(var + np.float64(np.float32(1e-5))) + offset)
    (x, scale, mean, v, dy), (dx, dscale, doffset) = run("grad_first")
    col = (slice(None), None)
    n, var = x.shape[1], v ** 2
    centered, stddev = x - mean[col], np.sqrt(var[col] + 0.5)
    assert np.allclose(doffset, dy.sum(axis=1), rtol=1e-4, atol=1e-4)
    assert np.allclose(dscale, (dy * centered / stddev).sum(axis=1), rtol=1e-4, atol=1e-4)
    want = scale[col] / stddev / n * (dy * n - dy.sum(axis=1)[col]
                                      - (dy * centered).sum(axis=1)[col] * centered / (var[col] + 0.5))
    assert np.allclose(dx, want, rtol=1e-4, atol=1e-4)


SELECT_AND_SCATTER = """func.func @{name}(%x: tensor<{operand}>, %s: tensor<{source}>, %i: tensor<{element}>)
    -> tensor<{operand}> {{
  %0 = "stablehlo.select_and_scatter"(%x, %s, %i) <{{{attrs}}}> ({{
  ^bb0(%a: tensor<{element}>, %b: tensor<{element}>):
    %c = stablehlo.compare {direction}, %a, %b : (tensor<{element}>, tensor<{element}>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }}, {{
  ^bb0(%a: tensor<{element}>, %b: tensor<{element}>):
    %c = stablehlo.add %a, %b : tensor<{element}>
    stablehlo.return %c : tensor<{element}>
  }}) : (tensor<{operand}>, tensor<{source}>, tensor<{element}>) -> tensor<{operand}>
  return %0 : tensor<{operand}>
}}
"""
# (name, operand, source, attributes, select direction); ties among small random integers
# show which element of a window is selected first
SELECT_AND_SCATTERS = [
    ("max_pool_grad", "4x6xf32", "2x3xf32", "window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>",
     "GE"),
    ("overlapping_min", "5x5xi32", "4x4xi32",
     "window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1, 1>", "LE"),
    ("padded", "3x5xf64", "2x3xf64", "window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 2>,"
     " padding = dense<[[1, 0], [1, 1]]> : tensor<2x2xi64>", "GT"),
    ("one_d_ties", "7xi16", "3xi16", "window_dimensions = array<i64: 3>, window_strides = array<i64: 2>", "GE"),
]


def select_and_scatter_snippets() -> str:
    return "\n".join(SELECT_AND_SCATTER.format(name=name, operand=operand, source=source, attrs=attrs,
                                               direction=direction, element=operand.split("x")[-1])
                     for name, operand, source, attrs, direction in SELECT_AND_SCATTERS)


@pytest.mark.parametrize("seed", SEEDS["select_and_scatter"])
def test_select_and_scatter_against_the_interpreter(seeded: Props, seed: int) -> None:
    props = seeded("select_and_scatter", seed)
    failed = {node: p.get("mlir_kind", p["outcome"]) for node, p in props.items() if p["outcome"] != "passed"}
    assert not failed and len(props) == 2 * len(SELECT_AND_SCATTERS), failed
    assert {p["mlir_reference"] for node, p in props.items() if node.endswith("[execute]")} == {
        "StableHLO reference interpreter"}


# each file's text, by its stem (``seeded``)
TEXTS: dict[str, Callable[[], str]] = {
    "scatter": scatter_snippets, "control": lambda: CONTROL, "sort": lambda: SORT, "batch_norm": lambda: BATCH_NORM,
    "select_and_scatter": select_and_scatter_snippets}
