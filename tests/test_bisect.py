"""Triage of wrong results and reduction (issue 43): ``--mlir-bisect`` names the pass a
golden-mismatch's results diverge after (``diverged_after``), ``front-end`` when they are
wrong before any pass; ``mlir-snippets reduce`` shrinks a failing snippet."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from pytest_mlir_snippets.worker.triage.bisect import FRONT_END, TRANSLATION, search

# tosa-narrow-i64-to-i32{aggressive-rewrite} changes what the function computes: its i64
# constant 5000000000 becomes 2147483647 ("may lead to data loss", says the pass)
NARROWING = "tosa-narrow-i64-to-i32{aggressive-rewrite}"
PIPELINE = (f"builtin.module(func.func({NARROWING}), func.func(tosa-to-arith, tosa-to-linalg), "
            "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}, "
            "func.func(convert-linalg-to-loops), convert-scf-to-cf, expand-strided-metadata, "
            "finalize-memref-to-llvm, convert-arith-to-llvm, convert-func-to-llvm, convert-cf-to-llvm, "
            "reconcile-unrealized-casts)")
SHIFT = """func.func @shift(%a: tensor<4xi64>) -> tensor<4xi64> {
  %c = "tosa.const"() {values = dense<5000000000> : tensor<4xi64>} : () -> tensor<4xi64>
  %0 = tosa.add %a, %c : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}
"""
TWICE = """func.func @twice(%a: tensor<4xi64>) -> tensor<4xi64> {
  %0 = tosa.add %a, %a : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}
"""
INPUTS = [np.array([1, 2, 3, 4], np.int64)]


def test_the_search_names_the_step_after_which_results_stop_matching() -> None:
    names = [f"p{i}" for i in range(9)]
    tried: list[int] = []

    def monotone(k: int) -> bool:
        tried.append(k)
        return k < 5

    found = search(names, monotone, None)
    assert found.diverged_after == "p5" and len(tried) <= 6  # binary: not every cut
    assert "cut after p4: matches" in found.bisect_cuts and "cut after p5: differs" in found.bisect_cuts
    assert search(names, lambda k: False, None).diverged_after == FRONT_END  # wrong right after import
    assert search(names, lambda k: True, None).diverged_after == TRANSLATION  # every cut matches
    # cuts the plain tail cannot lower have no verdict and are passed over
    found = search(names, lambda k: None if k in (3, 4) else k < 5, None)
    assert found.diverged_after == "p5" and any("no verdict" in line for line in found.bisect_cuts)
    found = search(names, lambda k: None if k == 4 else k < 4, None)
    assert found.diverged_after == "p5" and "at or before p5" in found.bisect_cuts[-1]
    # past its deadline (--mlir-bisect-timeout): the first and last cuts only, and the range left
    found = search(names, monotone, time.monotonic())
    assert found.diverged_after == "p8" and found.bisect_cuts[-1] == (
        "stopped at --mlir-bisect-timeout: the divergence is after import, at or before p8")


def test_the_cut_pipeline_finds_the_pass_that_changed_the_results() -> None:
    from pytest_mlir_snippets.protocol import Options, Recorded
    from pytest_mlir_snippets.worker.targets.cpu import CpuBackend

    backend = CpuBackend()
    right = Recorded(INPUTS, [INPUTS[0] + 5_000_000_000])
    found = backend.bisect(SHIFT, "shift", Options(pipeline=PIPELINE), right, {})
    assert found.diverged_after == NARROWING, found
    # sabotaged: the golden the narrowed code computes; the snippet as imported now differs from it
    narrowed = Recorded(INPUTS, [(INPUTS[0] + 2_147_483_647).astype(np.int32).astype(np.int64)])
    assert backend.bisect(SHIFT, "shift", Options(pipeline=PIPELINE), narrowed, {}).diverged_after == FRONT_END


@pytest.mark.slow
def test_bisect_on_the_record_in_the_failure_and_the_run_report(pytester: pytest.Pytester) -> None:
    (pytester.path / "ops.mlir").write_text(SHIFT + "\n" + TWICE)
    np.savez(pytester.path / "ops.shift.npz", input_0=INPUTS[0], output_0=INPUTS[0] + 5_000_000_000)
    np.savez(pytester.path / "ops.twice.npz", input_0=INPUTS[0], output_0=np.array([2, 4, 6, 9]))  # wrong at [3]
    out = pytester.path / "records.json"
    result = pytester.runpytest("-p", "no:cacheprovider", "--mlir-bisect", f"--mlir-json={out}",
                                f"--mlir-pipeline={PIPELINE}")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines([f"diverged after: {NARROWING} (--mlir-bisect)", "*Captured bisection call*",
                                 "cut after import: matches", f"cut after {NARROWING}: differs"])
    result.stdout.fnmatch_lines(["diverged after: front-end (--mlir-bisect)"])
    records = {r["function"]: r for r in json.loads(out.read_text())["items"] if r["stage"] == "execute"}
    assert records["shift"]["diverged_after"] == NARROWING and records["twice"]["diverged_after"] == FRONT_END
    report = (pytester.path / "ops-run-report.txt").read_text()
    assert f"   diverged after: {NARROWING}" in report and "   diverged after: front-end" in report
    pytester.runpytest("-p", "no:cacheprovider", f"--mlir-json={out}", f"--mlir-pipeline={PIPELINE}")
    assert not any(r["diverged_after"] for r in json.loads(out.read_text())["items"])  # only with --mlir-bisect


def chain(failing: str) -> str:
    """A function of 20 ops, ``failing`` the 10th (its result feeds the rest)."""
    ops = ["arith.addf %a, %b", "arith.mulf %0, %a", "arith.subf %1, %b", "math.exp %2", "arith.addf %3, %0",
           "math.tanh %4", "arith.mulf %5, %5", "arith.maximumf %6, %a", "arith.minimumf %7, %b", failing,
           "arith.addf %9, %1", "arith.negf %10", "math.absf %11", "math.sqrt %12", "arith.mulf %13, %2",
           "arith.addf %14, %3", "arith.subf %15, %4", "math.floor %16", "arith.addf %17, %6", "arith.mulf %18, %a"]
    body = "".join(f"  %{i} = {op} : tensor<4xf32>\n" for i, op in enumerate(ops))
    return (f"func.func @chain(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {{\n{body}"
            "  return %19 : tensor<4xf32>\n}\n")


CLAMP = "math.clampf %8 to [%a, %b]"  # no lowering to LLVM: convert-math-to-libm fails on it


def mlir_snippets(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_mlir_snippets.tools.cli", *args], cwd=cwd,
                          capture_output=True, text=True, check=False)


@pytest.mark.slow
def test_reduce_shrinks_a_snippet_to_its_failing_op(tmp_path: Path) -> None:
    source = chain(CLAMP)
    (tmp_path / "ops.mlir").write_text(source)
    done = mlir_snippets("reduce", "ops.mlir::chain", "--out", "small.mlir", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "25 lines, 22 ops before" in done.stdout  # module, function, 20 ops, return
    small = (tmp_path / "small.mlir").read_text()
    assert len(small.splitlines()) <= 0.4 * len(source.splitlines()), small
    assert "math.clampf" in small and "math.tanh" not in small
    missing = mlir_snippets("reduce", "ops.mlir::chains", cwd=tmp_path)
    assert missing.returncode == 2 and missing.stderr.strip() == (
        "mlir-snippets reduce: ops.mlir has no public function chains (it has: chain)")


@pytest.mark.slow
def test_a_candidate_is_interesting_when_it_fails_the_same_way(tmp_path: Path) -> None:
    from pytest_mlir_snippets.triage.interesting import Spec, failure_of, interesting, opened

    (tmp_path / "ops.mlir").write_text(chain(CLAMP))
    spec = Spec("chain", str(tmp_path / "ops.mlir"), 1)
    sandbox = opened(spec)
    try:
        spec.kind, spec.first, spec.compiles = failure_of(sandbox, chain(CLAMP), spec, None)
        assert (spec.kind, spec.compiles) == ("compile-error", False)
        assert spec.first == "failed to legalize operation 'math.clampf' that was explicitly marked illegal"
        assert interesting(sandbox, chain(CLAMP.replace("%8", "%7")), spec, None)
        # sabotaged: another failing op (same kind, another first diagnostic), no failing op
        sincos = chain("math.sincos %8").replace("%9 = math.sincos", "%9, %s = math.sincos")
        assert not interesting(sandbox, sincos, spec, None)
        assert not interesting(sandbox, chain("arith.addf %8, %a"), spec, None)
    finally:
        sandbox.close()
    (tmp_path / "ok.mlir").write_text(TWICE)
    np.savez(tmp_path / "ok.twice.npz", input_0=INPUTS[0], output_0=INPUTS[0] * 2)
    done = mlir_snippets("reduce", "ok.mlir::twice", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.strip() == (
        "mlir-snippets reduce: ok.mlir::twice does not fail on cpu (pass): nothing to reduce")


def test_the_op_deletion_loop_keeps_what_the_test_needs() -> None:
    from pytest_mlir_snippets.triage.opdeletion import count_ops, shrink

    source = chain(CLAMP)
    small = shrink(source, lambda text: "math.clampf" in text and "math.tanh" in text)
    assert count_ops(small) == 4 and "math.exp" not in small  # the function, tanh, clampf, return
    assert "math.tanh" in small and "math.clampf" in small
    assert shrink(source, lambda text: False) == source  # nothing is interesting: nothing changes
    # a zero constant stands in where no operand or argument has the type, and ends
    mixed = source.replace("%19 = arith.mulf %18, %a : tensor<4xf32>", "%19 = arith.mulf %18, %a : tensor<4xf32>\n"
                           "  %20 = arith.fptosi %19 : tensor<4xf32> to tensor<4xi32>\n"
                           "  %21 = arith.addi %20, %20 : tensor<4xi32>").replace(
        "return %19 : tensor<4xf32>", "return %21 : tensor<4xi32>").replace("-> tensor<4xf32> {", "-> tensor<4xi32> {")
    assert count_ops(mixed) == 24
    small = shrink(mixed, lambda text: "arith.addi" in text)
    assert "arith.constant" in small and count_ops(small) == 4, small  # the function, constant, addi, return


def test_the_default_pipeline_cuts_name_the_plugins_own_steps() -> None:
    from pytest_mlir_snippets.worker.targets.cpu import default_pipeline
    from pytest_mlir_snippets.worker.triage.cpu_bisect import Cuts

    softmax = TWICE.replace("return", "// linalg.softmax (decompose.needed reads the text)\n  return")
    names = [name for name, _ in Cuts(softmax, default_pipeline(), [], own_steps=True).steps]
    assert names[0] == "plugin:decompose" and names[1] == "tosa-to-scf" and names[-1] == "reconcile-unrealized-casts"
    middle = names.index("plugin:prepare_for_llvm")
    assert names[middle - 1] == "convert-complex-to-standard" and names[middle + 1] == "convert-vector-to-scf"
    assert "plugin:decompose" not in [n for n, _ in Cuts(softmax, default_pipeline(), [], own_steps=False).steps]
    assert len(names) == 37  # the 36 steps measured in docs/triage.md, and plugin:decompose
