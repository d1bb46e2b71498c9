"""Optimization run directories: one set of items per vN iteration (contract so far)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

MODEL = """func.func @forward(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<16x16xf32>, tensor<16x16xf32>)
                     outs(%init : tensor<16x16xf32>) -> tensor<16x16xf32>
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
        f"run/model_linalg.mlir::v{n}[{stage}]" for n in (0, 1, 2, 3, 10)
        for stage in ("contract", "compile", "correctness")]
    result = pytester.runpytest("-p", "no:cacheprovider", "-rs", "-k", "contract or compile")
    result.assert_outcomes(passed=4, failed=5, skipped=1)
    result.stdout.fnmatch_lines([
        "*contract: v1/transform.mlir: @__transform_main only yields: a placeholder, not a schedule*",
        "*contract: v2/hypothesis.txt is empty*",
        "*contract: v3/transform.mlir: transform.mlir does not parse*",
        "*v3/transform.mlir:1:*: error: *",
        "*contract: v10/transform.mlir is missing*",
    ])
    result.stdout.fnmatch_lines(["*v10*contract not met: transform.mlir missing*"])
    one = pytester.runpytest("-p", "no:cacheprovider", "-k", "v2 and not correctness")
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


TO_LLVM = ("one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},"
           " buffer-deallocation-pipeline, convert-bufferization-to-memref, func.func(convert-linalg-to-loops),"
           " convert-scf-to-cf, expand-strided-metadata, lower-affine, finalize-memref-to-llvm,"
           " convert-arith-to-llvm, convert-index-to-llvm, convert-func-to-llvm, convert-cf-to-llvm,"
           " reconcile-unrealized-casts")


def test_correctness_against_the_model_and_against_recorded_outputs(pytester: pytest.Pytester, run_items) -> None:
    run = pytester.mkdir("run")
    (run / "model_linalg.mlir").write_text(MODEL)
    iteration(run, "v0")
    (run / "v0" / "pass_pipeline.txt").write_text(TO_LLVM)
    iteration(run, "v1")  # stops before LLVM: it cannot run
    (run / "v1" / "pass_pipeline.txt").write_text("one-shot-bufferize{bufferize-function-boundaries}")
    result, props = run_items("-k", "correctness")
    assert props["model_linalg.mlir::v0[correctness]"]["outcome"] == "passed"
    assert props["model_linalg.mlir::v0[correctness]"]["mlir_reference"] == "plain lowering (cpu)"
    assert float(props["model_linalg.mlir::v0[correctness]"]["mlir_pcc"]) > 0.9999
    assert props["model_linalg.mlir::v1[correctness]"]["outcome"] == "failure"
    result.stdout.fnmatch_lines(["*translation to LLVM failed*"])
    # recorded outputs that disagree with the model: the iteration is caught
    a, b = np.ones((16, 16), np.float32), np.eye(16, dtype=np.float32)
    np.savez(run / "model_linalg.forward.npz", input_0=a, input_1=b, output_0=a @ b + 1)
    result, props = run_items("-k", "v0 and correctness")
    assert props["model_linalg.mlir::v0[correctness]"]["outcome"] == "failure"
    result.stdout.fnmatch_lines(["*results differ from the recorded outputs (model_linalg.forward.npz)*"])
