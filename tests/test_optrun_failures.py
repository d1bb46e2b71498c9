"""An optimization run's iteration whose compile goes wrong: a crash located and reproduced
as a snippet's, a translation failure pointing into ``vN/llvm.mlir``, a compile that takes
too long done once (the stages after it skip)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ENTRY_AND_I1 = """module {
  func.func @forward(%a: tensor<4xf32>) -> tensor<4xf32> {
    return %a : tensor<4xf32>
  }
  module @inner {
    func.func @load(%m: memref<4xi1>, %i: index) -> i1 {
      %0 = memref.load %m[%i] : memref<4xi1>
      return %0 : i1
    }
  }
}
"""
# finalize-memref-to-llvm run by the schedule on a stored i1: upstream's assertion (SIGABRT)
CRASHING = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %inner = transform.structured.match ops{["builtin.module"]} attributes {sym_name = "inner"} in %root
      : (!transform.any_op) -> !transform.any_op
    %lowered = transform.apply_registered_pass "finalize-memref-to-llvm" to %inner
      : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
"""
CANONICALIZE = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %func = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
"""
ERF = """func.func @forward(%a: f32) -> f32 {
  %0 = math.erf %a : f32
  return %0 : f32
}
"""
# math ops left to the translation (no convert-math-to-libm)
TO_LLVM_BUT_MATH = ("builtin.module(convert-math-to-llvm, convert-arith-to-llvm, convert-func-to-llvm, "
                    "reconcile-unrealized-casts)")
# 50000 iterations unrolled: the compile (translation and machine code) takes tens of seconds
LONG = """func.func @forward(%a: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 50000 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> f32 {
    %s = arith.mulf %acc, %acc : f32
    %t = arith.addf %s, %a : f32
    scf.yield %t : f32
  }
  return %r : f32
}
"""
UNROLL = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %loop = transform.structured.match ops{["scf.for"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.loop.unroll %loop {factor = 50000} : !transform.any_op
    transform.yield
  }
}
"""
SCALAR_TO_LLVM = ("builtin.module(convert-scf-to-cf, convert-arith-to-llvm, convert-func-to-llvm, convert-cf-to-llvm, "
                  "reconcile-unrealized-casts)")


def run_of(root: Path, model: str, schedule: str, pipeline: str) -> Path:
    run = root / "run"
    (run / "v0").mkdir(parents=True)
    (run / "model_linalg.mlir").write_text(model)
    (run / "v0" / "transform.mlir").write_text(schedule)
    (run / "v0" / "pass_pipeline.txt").write_text(pipeline + "\n")
    (run / "v0" / "hypothesis.txt").write_text("what goes wrong\n")
    return run


def records(path: Path) -> dict[str, dict]:
    return {r["stage"]: r for r in json.loads(path.read_text())["items"]}


def test_an_iteration_compile_crash_names_its_step_and_writes_a_reproducer(pytester: pytest.Pytester) -> None:
    run = run_of(pytester.path, ENTRY_AND_I1, CRASHING, SCALAR_TO_LLVM)
    out = pytester.path / "records.json"
    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "compile", f"--mlir-json={out}")
    result.stdout.fnmatch_lines(["*the sandbox worker killed by SIGABRT in transform-interpreter*",
                                 "*reproducer*", "sh *ops_mlir_snippets/run/model_linalg.mlir/v0/cpu/reproduce.sh"])
    compiled = records(out)["compile"]
    assert (compiled["kind"], compiled["failing_pass"]) == ("crash", "transform-interpreter")
    script = pytester.path / compiled["reproducer"]
    done = subprocess.run(["/bin/sh", str(script)], capture_output=True, text=True, check=False)
    assert done.returncode == -signal.SIGABRT and "integralElementType.getWidth() >= 8" in done.stderr
    assert compiled["line"] == 2  # the model's entry function: the run report's line column
    assert re.search(r"^v0 +2  crash", (run / "model_linalg-run-report.txt").read_text(), re.MULTILINE)


def test_a_translation_error_points_into_llvm_mlir_and_is_made_once(pytester: pytest.Pytester) -> None:
    run = run_of(pytester.path, ERF, CANONICALIZE, TO_LLVM_BUT_MATH)
    out = pytester.path / "records.json"
    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "not contract", f"--mlir-json={out}")
    result.assert_outcomes(passed=1, failed=2)
    lowered = (run / "v0" / "llvm.mlir").read_text().splitlines()
    assert not (run / "v0" / "gpu.mlir").exists()  # cpu's final IR is the LLVM dialect's
    found = records(out)
    for stage in ("correctness", "benchmark"):
        record = found[stage]
        assert record["kind"] == "compile-error" and record["failing_pass"] == "translation", record
        where, _, said = record["diagnostics"][0].partition(": error: ")
        path, line, _ = where.rsplit(":", 2)
        assert path == str(run / "v0" / "llvm.mlir") and "math.erf" in lowered[int(line) - 1], record["diagnostics"]
        assert "math.erf" in said


TRIED_ONCE = """
import sys
import pytest
from pytest_mlir_snippets.worker.core import SnippetFailure
from pytest_mlir_snippets.worker.targets.cpu import CpuBackend

model, schedule, pipeline = sys.argv[1:4]
backend, tried = CpuBackend(), []
engine = backend.engine_type
backend.engine_type = lambda *args, **kwargs: tried.append(1) or engine(*args, **kwargs)
compiled = backend.compile_iteration(model, schedule, pipeline, "forward")
assert compiled.handle is None and not tried  # math.erf left: no translation in the compile
for _ in range(2):
    with pytest.raises(SnippetFailure, match="translation to LLVM failed"):
        backend.link(compiled)
assert len(tried) == 1
ready = backend.compile_iteration(model, schedule, pipeline.replace("(", "(convert-math-to-libm, ", 1), "forward")
assert ready.handle is not None and ready.kept.linked and len(tried) == 2  # translated and linked in the compile
print("ok")
"""


def test_a_translation_at_the_first_run_is_tried_once() -> None:
    """In the worker: [correctness] and [benchmark] run one compile; a translation that
    failed at its first run fails again without being tried again. In a process of its own,
    as the worker is: what other tests loaded into this one (MLIR's bindings, JAX's) stays out."""
    done = subprocess.run([sys.executable, "-c", TRIED_ONCE, ERF, CANONICALIZE, TO_LLVM_BUT_MATH],
                          capture_output=True, text=True, check=False, timeout=300)
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr[-3000:]


def test_a_compile_that_times_out_is_not_made_again(pytester: pytest.Pytester) -> None:
    """[correctness] makes the compile (no [compile] selected) and runs out of time: [benchmark]
    skips for it rather than compiling again."""
    run_of(pytester.path, LONG, UNROLL, SCALAR_TO_LLVM)
    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "correctness or benchmark", "--mlir-timeout=3", "-rs")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["SKIPPED [[]2[]] *compile failed (timeout): no answer within 3 s*"])
