"""``interpreter.run_parallel`` (issue 42): the programs of a replicas x partitions grid run
as calls the worker schedules, one thread each, their collectives computed across them as
the StableHLO specification defines them. One pytester run; every section sabotaged too."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow

SECTIONS = [
    # all_gather across replicas, variadic (two operands)
    """func.func @gather(%a: tensor<2xi64>, %b: tensor<1xf32>) -> (tensor<4xi64>, tensor<2xf32>) {
  %r:2 = "stablehlo.all_gather"(%a, %b) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}
      : (tensor<2xi64>, tensor<1xf32>) -> (tensor<4xi64>, tensor<2xf32>)
  return %r#0, %r#1 : tensor<4xi64>, tensor<2xf32>
}
func.func @main() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %1 = stablehlo.constant dense<[3, 4]> : tensor<2xi64>
  %2 = stablehlo.constant dense<[0.5]> : tensor<1xf32>
  %3 = stablehlo.constant dense<[1.5]> : tensor<1xf32>
  %r:4 = "interpreter.run_parallel"(%0, %2, %1, %3) {programs = [[@gather], [@gather]]}
      : (tensor<2xi64>, tensor<1xf32>, tensor<2xi64>, tensor<1xf32>)
      -> (tensor<4xi64>, tensor<2xf32>, tensor<4xi64>, tensor<2xf32>)
  check.expect_eq_const %r#0, dense<[1, 2, 3, 4]> : tensor<4xi64>
  check.expect_eq_const %r#1, dense<[0.5, 1.5]> : tensor<2xf32>
  check.expect_eq_const %r#2, dense<[1, 2, 3, 4]> : tensor<4xi64>
  func.return
}""",
    # all_reduce (maximum) then reduce_scatter (add) in one program, cross_replica_and_partition
    """func.func @reduce(%a: tensor<4xi64>) -> tensor<2xi64> {
  %m = "stablehlo.all_reduce"(%a) ({
    ^bb0(%x: tensor<i64>, %y: tensor<i64>):
      %0 = stablehlo.maximum %x, %y : tensor<i64>
      stablehlo.return %0 : tensor<i64>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xi64>) -> tensor<4xi64>
  %s = stablehlo.add %m, %a : tensor<4xi64>
  %r = "stablehlo.reduce_scatter"(%s) ({
    ^bb0(%x: tensor<i64>, %y: tensor<i64>):
      %0 = stablehlo.add %x, %y : tensor<i64>
      stablehlo.return %0 : tensor<i64>
  }) {scatter_dimension = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>} : (tensor<4xi64>) -> tensor<2xi64>
  return %r : tensor<2xi64>
}
func.func @main() {
  %0 = stablehlo.constant dense<[1, 9, 2, 0]> : tensor<4xi64>
  %1 = stablehlo.constant dense<[5, 3, 2, 7]> : tensor<4xi64>
  %r:2 = "interpreter.run_parallel"(%0, %1) {programs = [[@reduce], [@reduce]]}
      : (tensor<4xi64>, tensor<4xi64>) -> (tensor<2xi64>, tensor<2xi64>)
  check.expect_eq_const %r#0, dense<[16, 30]> : tensor<2xi64>
  check.expect_eq_const %r#1, dense<[8, 21]> : tensor<2xi64>
  func.return
}""",
    # collective_permute and the ids, on a 2 x 2 grid
    """func.func @ids(%a: tensor<i64>) -> (tensor<i64>, tensor<ui32>, tensor<ui32>) {
  %p = "stablehlo.collective_permute"(%a) {source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>}
      : (tensor<i64>) -> tensor<i64>
  %r = stablehlo.replica_id : tensor<ui32>
  %q = stablehlo.partition_id : tensor<ui32>
  return %p, %r, %q : tensor<i64>, tensor<ui32>, tensor<ui32>
}
func.func @main() {
  %0 = stablehlo.constant dense<10> : tensor<i64>
  %1 = stablehlo.constant dense<11> : tensor<i64>
  %2 = stablehlo.constant dense<12> : tensor<i64>
  %3 = stablehlo.constant dense<13> : tensor<i64>
  %r:12 = "interpreter.run_parallel"(%0, %1, %2, %3) {programs = [[@ids, @ids], [@ids, @ids]]}
      : (tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<ui32>, tensor<ui32>,
         tensor<i64>, tensor<ui32>, tensor<ui32>, tensor<i64>, tensor<ui32>, tensor<ui32>,
         tensor<i64>, tensor<ui32>, tensor<ui32>)
  check.expect_eq_const %r#0, dense<0> : tensor<i64>
  check.expect_eq_const %r#6, dense<10> : tensor<i64>
  check.expect_eq_const %r#9, dense<11> : tensor<i64>
  check.expect_eq_const %r#10, dense<1> : tensor<ui32>
  check.expect_eq_const %r#11, dense<1> : tensor<ui32>
  check.expect_eq_const %r#5, dense<1> : tensor<ui32>
  func.return
}""",
    # all_to_all across replicas
    """func.func @exchange(%a: tensor<4xi64>) -> tensor<4xi64> {
  %r = "stablehlo.all_to_all"(%a) {split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = 2 : i64,
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xi64>) -> tensor<4xi64>
  return %r : tensor<4xi64>
}
func.func @main() {
  %0 = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %1 = stablehlo.constant dense<[5, 6, 7, 8]> : tensor<4xi64>
  %r:2 = "interpreter.run_parallel"(%0, %1) {programs = [[@exchange], [@exchange]]}
      : (tensor<4xi64>, tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>)
  check.expect_eq_const %r#0, dense<[1, 2, 5, 6]> : tensor<4xi64>
  check.expect_eq_const %r#1, dense<[3, 4, 7, 8]> : tensor<4xi64>
  func.return
}""",
]
# per section, an expected value changed
SABOTAGE = [("dense<[0.5, 1.5]>", "dense<[0.5, 2.5]>"), ("dense<[8, 21]>", "dense<[8, 20]>"),
            ("%r#9, dense<11>", "%r#9, dense<12>"), ("dense<[3, 4, 7, 8]>", "dense<[3, 4, 8, 7]>")]
RUN = "// RUN: stablehlo-translate --interpret -split-input-file %s\n\n"


def test_run_parallel_programs_run_as_calls(pytester: pytest.Pytester) -> None:
    pytest.importorskip("torch_mlir")
    bad = [section.replace(*wrong) for section, wrong in zip(SECTIONS, SABOTAGE, strict=True)]
    assert bad != SECTIONS and all(b != s for b, s in zip(bad, SECTIONS))
    (pytester.path / "good.mlir").write_text(RUN + "\n\n// -----\n\n".join(SECTIONS))
    (pytester.path / "bad.mlir").write_text(RUN + "\n\n// -----\n\n".join(bad))
    out = pytester.path / "records.json"
    pytester.runpytest("-p", "no:cacheprovider", "-n", "0", f"--mlir-json={out}")
    records = {(r["file"].removesuffix(".mlir"), r["name"]): r for r in json.loads(out.read_text())["items"]}
    mains = ["main", "main~2", "main~3", "main~4"]
    for name in mains:
        good, wrong = records[("good", f"{name}[execute]")], records[("bad", f"{name}[execute]")]
        assert good["kind"] == "pass" and good["golden"] == "checks", (name, good["message"])
        assert good["computed"] == "runtime", name
        assert wrong["kind"] == "golden-mismatch", (name, wrong["message"])
    alone = records[("good", "gather[compile]")]  # a program alone: no grid says its replicas
    assert alone["kind"] == "unsupported" and "interpreter.run_parallel" in alone["message"]
