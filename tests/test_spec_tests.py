"""The StableHLO specification's interpreter tests as written (issue 42): ``-split-input-file``
sections are modules, the check dialect in its custom syntax, small floats computed, and
what needs several processes or the interpreter itself ``unsupported`` by name. Real pytest
runs on real MLIR; every golden is also sabotaged."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from pytest_mlir_snippets.mlirtext.splitter import SnippetSource

pytestmark = pytest.mark.slow

SECTIONS = """// RUN: stablehlo-translate --interpret -split-input-file %s

#map = affine_map<(d0) -> (d0)>
func.func private @g() -> i32 {
  %c = arith.constant 1 : i32
  return %c : i32
}
func.func @f() -> i32 {
  %0 = call @g() : () -> i32
  return %0 : i32
}

// -----

#map = affine_map<(d0) -> (d0 + 1)>
func.func private @g() -> i32 {
  %c = arith.constant 2 : i32
  return %c : i32
}
func.func @f() -> i32 {
  %0 = call @g() : () -> i32
  return %0 : i32
}
func.func @h() { return }
func.func @h() { return }
"""


def test_sections_are_modules_under_split_input_file() -> None:
    source = SnippetSource(SECTIONS)
    assert [fn.uid for fn in source.functions] == ["f", "f~2", "h", "h~2"]
    first, second = source.functions[0], source.functions[1]
    assert first.duplicate_of is None and second.duplicate_of is None  # a section each: no redefinition
    assert source.functions[3].duplicate_of == source.functions[2].line  # twice in one section: still one
    text = source.split(second).text
    assert "constant 2" in text and "constant 1" not in text  # the callee of its own section
    assert "d0 + 1" in text and text.count("#map") == 1  # its section's alias only
    assert source.split(second).original_line(text.splitlines().index("func.func @f() -> i32 {") + 1) == 20


def test_without_the_flag_the_marker_is_a_comment() -> None:
    source = SnippetSource(SECTIONS.replace("-split-input-file", ""))
    assert [fn.uid for fn in source.functions][:2] == ["f", "f~2"]
    assert source.functions[1].duplicate_of == source.functions[0].line  # one module: a redefinition


SPEC = """// RUN: stablehlo-translate --interpret -split-input-file %s

func.func @add_op_test_si64() {
  %lhs = stablehlo.constant dense<[0, 1, 2]> : tensor<3xi64>
  %rhs = stablehlo.constant dense<[5, 6, 7]> : tensor<3xi64>
  %result = stablehlo.add %lhs, %rhs : tensor<3xi64>
  check.expect_eq_const %result, dense<[5, 7, 9]> : tensor<3xi64>
  func.return
}

// -----

func.func @add_op_test_si64() {
  %lhs = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %result = stablehlo.add %lhs, %lhs : tensor<2x2xi64>
  check.expect_eq_const %result, dense<[[2, 4],
                                        [6, 8]]> : tensor<2x2xi64>
  func.return
}

// -----

func.func @almost() {
  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf64>
  %e = stablehlo.constant dense<[1.05, 1.95]> : tensor<2xf64>
  check.expect_almost_eq %a, %e, tolerance = 0.1 : tensor<2xf64>
  check.expect_almost_eq_const %a, dense<[1.05, 2.05]> : tensor<2xf64> {tolerance = 0.1 : f64}
  func.return
}

// -----

func.func @close() {
  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf16>
  %r = stablehlo.exponential %a : tensor<2xf16>
  %e = stablehlo.constant dense<[2.7207, 7.3887]> : tensor<2xf16>
  check.expect_close %r, %e, max_ulp_difference = 3 : tensor<2xf16>, tensor<2xf16>
  func.return
}

// -----

func.func @close_generic() {
  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf16>
  %r = stablehlo.exponential %a : tensor<2xf16>
  %e = stablehlo.constant dense<[2.7207, 7.3887]> : tensor<2xf16>
  "check.expect_close"(%r, %e) {max_ulp_difference = 2 : ui64} : (tensor<2xf16>, tensor<2xf16>) -> ()
  func.return
}

// -----

func.func @f8_add() {
  %a = stablehlo.constant dense<[1.0, 0.5, 3.0]> : tensor<3xf8E4M3FN>
  %r = stablehlo.add %a, %a : tensor<3xf8E4M3FN>
  check.expect_almost_eq_const %r, dense<[2.0, 1.0, 6.0]> : tensor<3xf8E4M3FN>
  func.return
}

// -----

func.func @f8_constant() {
  %0 = stablehlo.constant dense<[0.1, 0x7F]> : tensor<2xf8E4M3FN>
  check.expect_almost_eq_const %0, dense<[0.1015630, 0x7F]> : tensor<2xf8E4M3FN>
  func.return
}

// -----

func.func @iota() {
  %0 = stablehlo.iota dim = 0 : tensor<4xi64>
  check.expect_eq_const %0, dense<[0, 1, 2, 3]> : tensor<4xi64>
  func.return
}

// -----

func.func @gather() -> tensor<2xi64> {
  %x = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %0 = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0]]> : tensor<1x1xi64>}
      : (tensor<2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @probed() {
  %x = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  check.expect_serialized_eq %x, probe_id = "probe0" : tensor<2xi64>
  func.return
}
"""


def _records(pytester: pytest.Pytester, text: str) -> dict[str, dict[str, Any]]:
    (pytester.path / "spec.mlir").write_text(text)
    out = pytester.path / "records.json"
    pytester.runpytest("-p", "no:cacheprovider", f"--mlir-json={out}", "spec.mlir")
    return {r["name"]: r for r in json.loads(out.read_text())["items"]}


@pytest.fixture(scope="module")
def shared_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, dict[str, Any]]]:
    """The records of each text of ``SHARED`` (file stem -> snippet text), all run as files of
    one pytest run (every run is a worker started and its compiles made): stem -> name -> record."""
    folder = tmp_path_factory.mktemp("spec")
    for stem, text in SHARED.items():
        (folder / f"{stem}.mlir").write_text(text)
    out = folder / "records.json"
    subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--mlir-json={out}",
                    *(f"{stem}.mlir" for stem in SHARED)], cwd=folder, capture_output=True, check=False)
    records: dict[str, dict[str, dict[str, Any]]] = {stem: {} for stem in SHARED}
    for record in json.loads(out.read_text())["items"]:
        records[record["file"].removesuffix(".mlir")][record["name"]] = record
    return records


def test_the_spec_convention_runs_on_cpu(shared_run: dict[str, dict[str, dict[str, Any]]]) -> None:
    pytest.importorskip("torch_mlir")
    records = shared_run["spec"]
    passing = ["add_op_test_si64", "add_op_test_si64~2", "close", "close_generic", "f8_add", "iota"]
    for name in passing:
        record = records[f"{name}[execute]"]
        assert record["kind"] == "pass", (name, record["message"])
        assert record["golden"] == "checks" and record["computed"] == "runtime", name
    for name in ("almost", "f8_constant"):  # constants checked as written: no op between, nothing computed
        record = records[f"{name}[execute]"]
        assert (record["kind"], record["computed"]) == ("skip", "nothing"), (name, record["message"])
    gather = records["gather[compile]"]
    assert gather["kind"] == "unsupported" and "stablehlo.all_gather" in gather["message"]
    assert "several processes" in gather["message"] and "IREE" not in gather["message"]
    probed = records["probed[compile]"]
    assert probed["kind"] == "unsupported" and "check.expect_serialized_eq" in probed["message"]
    assert "IREE" not in probed["message"]


WRONG = [
    ("dense<[5, 7, 9]>", "dense<[5, 7, 10]>"),  # an expected value changed
    ("dense<[2.0, 1.0, 6.0]>", "dense<[2.0, 1.0, 8.0]>"),  # f8 arithmetic
    ("dense<[0.1015630, 0x7F]>", "dense<[0.125, 0x7F]>"),  # an f8 constant fed and read back
    ("dense<[0, 1, 2, 3]>", "dense<[0, 1, 3, 3]>"),  # iota
    ("tolerance = 0.1 :", "tolerance = 0.01 :"),  # a tolerance tightened
    ("max_ulp_difference = 3 :", "max_ulp_difference = 0 :"),  # one ULP off, no longer allowed
    ("{max_ulp_difference = 2 : ui64}", "{max_ulp_difference = 0 : ui64}"),  # the generic form's attribute
]


@pytest.mark.parametrize("wrong", WRONG)
def test_sabotaged_expectations_fail(shared_run: dict[str, dict[str, dict[str, Any]]],
                                     wrong: tuple[str, str]) -> None:
    pytest.importorskip("torch_mlir")
    assert SPEC.replace(*wrong) != SPEC
    records = shared_run[f"spec_wrong{WRONG.index(wrong)}"]
    failed = [name for name, r in records.items() if r["kind"] == "golden-mismatch"]
    assert len(failed) == 1, failed


PACKS = """
func.func @pack_padded() {
  %a = util.unfoldable_constant dense<[[1, 2, 3], [4, 5, 6], [7, 8, 9]]> : tensor<3x3xi32>
  %pad = arith.constant 0 : i32
  %init = tensor.empty() : tensor<2x2x2x2xi32>
  %p = linalg.pack %a padding_value(%pad : i32) inner_dims_pos = [0, 1] inner_tiles = [2, 2] into %init
      : tensor<3x3xi32> -> tensor<2x2x2x2xi32>
  check.expect_eq_const(%p, dense<[[[[1, 2], [4, 5]], [[3, 0], [6, 0]]], [[[7, 8], [0, 0]], [[9, 0], [0, 0]]]]>
      : tensor<2x2x2x2xi32>) : tensor<2x2x2x2xi32>
  return
}

func.func @pack_dynamic_tiles() {
  %a = util.unfoldable_constant dense<[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]]>
      : tensor<4x4xi32>
  %t = util.unfoldable_constant 2 : index
  %in = tensor.cast %a : tensor<4x4xi32> to tensor<?x?xi32>
  %init = tensor.empty(%t, %t, %t, %t) : tensor<?x?x?x?xi32>
  %p = linalg.pack %in inner_dims_pos = [0, 1] inner_tiles = [%t, %t] into %init
      : tensor<?x?xi32> -> tensor<?x?x?x?xi32>
  %s = tensor.cast %p : tensor<?x?x?x?xi32> to tensor<2x2x2x2xi32>
  check.expect_eq_const(%s, dense<[[[[0, 1], [4, 5]], [[2, 3], [6, 7]]], [[[8, 9], [12, 13]], [[10, 11], [14, 15]]]]>
      : tensor<2x2x2x2xi32>) : tensor<2x2x2x2xi32>
  return
}

func.func @softmax() {
  %a = util.unfoldable_constant dense<[[1.0, 1.0], [0.0, 0.6931472]]> : tensor<2x2xf32>
  %init = tensor.empty() : tensor<2x2xf32>
  %s = linalg.softmax dimension(1) ins(%a : tensor<2x2xf32>) outs(%init : tensor<2x2xf32>) -> tensor<2x2xf32>
  check.expect_almost_eq_const(%s, dense<[[0.5, 0.5], [0.3333333, 0.6666667]]> : tensor<2x2xf32>) : tensor<2x2xf32>
  return
}

func.func @unpack_sliced() {
  %a = util.unfoldable_constant dense<[[[[1, 2], [4, 5]], [[3, 0], [6, 0]]], [[[7, 8], [0, 0]], [[9, 0], [0, 0]]]]>
      : tensor<2x2x2x2xi32>
  %init = tensor.empty() : tensor<3x3xi32>
  %u = linalg.unpack %a inner_dims_pos = [0, 1] inner_tiles = [2, 2] into %init : tensor<2x2x2x2xi32> -> tensor<3x3xi32>
  check.expect_eq_const(%u, dense<[[1, 2, 3], [4, 5, 6], [7, 8, 9]]> : tensor<3x3xi32>) : tensor<3x3xi32>
  return
}
"""


PACKS_WRONG = [("[7, 8, 9]]> : tensor<3x3xi32>) :", "[7, 8, 8]]> : tensor<3x3xi32>) :"),
               ("[[10, 11], [14, 15]]", "[[10, 11], [14, 16]]"),
               ("[0.3333333, 0.6666667]", "[0.3333333, 0.6766667]")]


@pytest.mark.parametrize("sabotage", [None, *PACKS_WRONG])
def test_pack_unpack_and_softmax_lower_before_bufferization(shared_run: dict[str, dict[str, dict[str, Any]]],
                                                    sabotage: tuple[str, str] | None) -> None:
    assert sabotage is None or PACKS.replace(*sabotage) != PACKS
    records = shared_run["packs" if sabotage is None else f"packs_wrong{PACKS_WRONG.index(sabotage)}"]
    executes = {name: r for name, r in records.items() if name.endswith("[execute]")}
    assert len(executes) == 4
    kinds = sorted(r["kind"] for r in executes.values())
    assert kinds == (["pass"] * 4 if sabotage is None else ["golden-mismatch", "pass", "pass", "pass"]), \
        [r["message"] for r in executes.values()]
    assert all(r["computed"] == "runtime" for r in executes.values())


def test_inputs_larger_than_memory_are_one_line_not_a_traceback(pytester: pytest.Pytester) -> None:
    records = _records(pytester, "func.func @big(%a: tensor<65536x65536xf64>) -> tensor<65536x65536xf64> {\n"
                                 "  return %a : tensor<65536x65536xf64>\n}\n")
    execute = records["big[execute]"]
    assert execute["kind"] == "unsupported"
    assert execute["message"].startswith("execute of @big: inputs need 32.0 GiB, more than the memory limit")
    assert "Traceback" not in execute["message"] and "\n" not in execute["message"]


FLOW = """
func.func @dynamic_constant() {
  %a = flow.tensor.dynamic_constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32> -> tensor<?x?xi32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %a, %c0 : tensor<?x?xi32>
  %d1 = tensor.dim %a, %c1 : tensor<?x?xi32>
  %t = flow.tensor.tie_shape %a : tensor<?x?xi32>{%d0, %d1}
  %s = arith.addi %t, %t : tensor<?x?xi32>
  %r = tensor.cast %s : tensor<?x?xi32> to tensor<2x2xi32>
  check.expect_eq_const(%r, dense<[[2, 4], [6, 8]]> : tensor<2x2xi32>) : tensor<2x2xi32>
  return
}
"""


@pytest.mark.parametrize("sabotage", [False, True])
def test_irees_dynamic_constants_are_unfoldable_constants_of_a_dynamic_type(
        shared_run: dict[str, dict[str, dict[str, Any]]], sabotage: bool) -> None:
    records = shared_run["flow_wrong" if sabotage else "flow"]
    execute = records["dynamic_constant[execute]"]
    assert execute["kind"] == ("golden-mismatch" if sabotage else "pass"), execute["message"]
    assert execute["computed"] == "runtime"


# the texts of the run the tests above share (``shared_run``)
SHARED = {"spec": SPEC, **{f"spec_wrong{i}": SPEC.replace(*wrong) for i, wrong in enumerate(WRONG)},
          "packs": PACKS, **{f"packs_wrong{i}": PACKS.replace(*wrong) for i, wrong in enumerate(PACKS_WRONG)},
          "flow": FLOW, "flow_wrong": FLOW.replace("[6, 8]", "[6, 9]")}
