"""Optimization run directories: one set of items per vN iteration (contract so far)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

MODEL = """func.func @forward(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %e = tensor.empty() : tensor<16x16xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<16x16xf32>, tensor<16x16xf32>)
                     outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}
"""
SCHEDULE = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %m = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l:2 = transform.structured.tile_using_for %m tile_sizes [8, 8]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}
"""
PLACEHOLDER = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    transform.yield
  }
}
"""


def iteration(run: Path, name: str, schedule: str | None = SCHEDULE, hypothesis: str = "tile 8x8") -> None:
    folder = run / name
    folder.mkdir()
    if schedule is not None:
        (folder / "transform.mlir").write_text(schedule)
    (folder / "pass_pipeline.txt").write_text("builtin.module(canonicalize)\n")
    (folder / "hypothesis.txt").write_text(hypothesis)


def test_contract_per_iteration(pytester: pytest.Pytester) -> None:
    run = pytester.mkdir("run")
    (run / "model_linalg.mlir").write_text(MODEL)
    iteration(run, "v0")
    iteration(run, "v1", schedule=PLACEHOLDER)
    iteration(run, "v2", hypothesis="  \n")
    iteration(run, "v3", schedule="transform.named_sequence @__transform_main(")
    iteration(run, "v10", schedule=None)
    collected = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    assert [line for line in collected.outlines if "::" in line] == [
        f"run/model_linalg.mlir::v{n}[{stage}]" for n in (0, 1, 2, 3, 10) for stage in ("contract", "compile")]
    result = pytester.runpytest("-p", "no:cacheprovider", "-rs")
    result.assert_outcomes(passed=4, failed=5, skipped=1)
    result.stdout.fnmatch_lines([
        "*contract: v1/transform.mlir: @__transform_main only yields: a placeholder, not a schedule*",
        "*contract: v2/hypothesis.txt is empty*",
        "*contract: v3/transform.mlir: transform.mlir does not parse*",
        "*v3/transform.mlir:1:*: error: *",
        "*contract: v10/transform.mlir is missing*",
    ])
    result.stdout.fnmatch_lines(["*v10*contract not met: transform.mlir missing*"])
    one = pytester.runpytest("-p", "no:cacheprovider", "-k", "v2")
    one.assert_outcomes(failed=1, passed=1)


def test_compile_applies_the_schedule_and_the_pipeline(pytester: pytest.Pytester) -> None:
    run = pytester.mkdir("run")
    (run / "model_linalg.mlir").write_text(MODEL)
    iteration(run, "v0")
    (run / "v0" / "pass_pipeline.txt").write_text(
        "one-shot-bufferize{bufferize-function-boundaries}, func.func(convert-linalg-to-loops)\n")
    iteration(run, "v1")
    (run / "v1" / "pass_pipeline.txt").write_text("builtin.module(no-such-pass)\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "compile")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*invalid pass_pipeline.txt pipeline*", "*'no-such-pass' does not refer to*"])
    lowered = (run / "v0" / "gpu.mlir").read_text()
    assert "scf.for" in lowered and "memref<16x16xf32>" in lowered and "transform." not in lowered
    config = json.loads((run / "v0" / "config.json").read_text())
    assert config["target"] == "cpu" and config["status"] == "pass" and config["kernels"] == []
    assert {op["op"] for op in config["host_ops"]} == {"scf.for", "memref.copy"}  # the tile loops, and a copy
    assert all(op["line"] for op in config["host_ops"])
    assert json.loads((run / "v1" / "config.json").read_text())["status"] == "compile-error"
