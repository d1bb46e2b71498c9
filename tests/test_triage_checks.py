"""Triage of what the plugin's own checks find (issue 54): ops a legalization leaves without
a lowering name the pass that left them and hand over a script that shows it; a function judged
by its check ops gets a driver and a reproducer when a check fails."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BIN = str(Path(sys.executable).parent)
CHOLESKY = """func.func @chol(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = "stablehlo.cholesky"(%a) {lower = true} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
"""


def clean_run(script: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["/bin/sh", str(script)], env={"PATH": "/nowhere"}, capture_output=True, text=True,
                          cwd="/", timeout=120)


def test_an_op_a_legalization_leaves_names_the_pass_and_reproduces(pytester: pytest.Pytester) -> None:
    (pytester.path / "chol.mlir").write_text(CHOLESKY)
    out = pytester.path / "records.json"
    pytester.runpytest("-p", "no:cacheprovider", "--mlir-skip-exec", f"--mlir-json={out}").assert_outcomes(failed=1)
    record = json.loads(out.read_text())["items"][0]
    assert (record["kind"], record["failing_pass"]) == ("compile-error", "stablehlo-legalize-to-linalg")
    script = pytester.path / record["reproducer"]
    assert "torch-mlir-opt" in script.read_text()  # the wheel's tool, by its absolute path
    done = clean_run(script)
    assert done.returncode == 1 and "stablehlo.cholesky" in done.stdout, done.stderr
    assert "error: stablehlo-legalize-to-linalg left 'stablehlo.cholesky' without a lowering" in done.stderr
    before = script.with_name("before-stablehlo-legalize-to-linalg.mlir")
    text = before.read_text().replace('"stablehlo.cholesky"(%arg0) <{lower = true}>', '"stablehlo.abs"(%arg0)')
    before.write_text(text.replace("stablehlo.cholesky %arg0, lower = true", "stablehlo.abs %arg0"))
    assert "cholesky" not in before.read_text()
    assert clean_run(script).returncode == 0  # sabotaged: the op converts, nothing is left


CHECKED = """func.func @twice() {{
  %0 = util.unfoldable_constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %1 = arith.addf %0, %0 : tensor<3xf32>
  check.expect_almost_eq_const(%1, dense<[2.0, 4.0, {last}]> : tensor<3xf32>) : tensor<3xf32>
  %2 = util.unfoldable_constant dense<[5, 6]> : tensor<2xi32>
  check.expect_eq_const(%2, dense<[5, 6]> : tensor<2xi32>) : tensor<2xi32>
  return
}}
"""


def test_a_failed_check_op_gets_a_driver_that_compiles_its_checks(pytester: pytest.Pytester) -> None:
    (pytester.path / "bad.mlir").write_text(CHECKED.format(last="7.0"))
    out = pytester.path / "records.json"
    result = pytester.runpytest("-p", "no:cacheprovider", f"--mlir-json={out}")
    result.assert_outcomes(passed=1, failed=1)
    record = next(r for r in json.loads(out.read_text())["items"] if r["stage"] == "execute")
    assert record["kind"] == "golden-mismatch" and record["reproducer"], record["message"]
    script = pytester.path / record["reproducer"]
    driver = script.with_name("driver.mlir").read_text()
    assert "the snippet's 2 check(s)" in driver
    done = clean_run(script)
    assert done.returncode == 1, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["FAIL: check #0 at index [2]: actual 6, expected 7 (difference -1)"]
    # sabotaged: the same driver with the check's expected value right passes
    script.with_name("driver.mlir").write_text(driver.replace("7.000000e+00", "6.000000e+00"))
    fixed = clean_run(script)
    assert fixed.returncode == 0 and fixed.stdout.strip() == "PASS", (fixed.stdout, fixed.stderr[-2000:])


COMPLEX = """func.func @cadd() {
  %0 = util.unfoldable_constant dense<[(1.0, 2.0), (3.0, -1.0)]> : tensor<2xcomplex<f32>>
  %1 = stablehlo.add %0, %0 : tensor<2xcomplex<f32>>
  check.expect_almost_eq_const(%1, dense<[(2.0, 4.0), (6.0, -3.0)]> : tensor<2xcomplex<f32>>) : tensor<2xcomplex<f32>>
  return
}
"""


def test_a_failed_check_of_complex_values_compares_both_parts(pytester: pytest.Pytester) -> None:
    (pytester.path / "c.mlir").write_text(COMPLEX)
    out = pytester.path / "records.json"
    pytester.runpytest("-p", "no:cacheprovider", f"--mlir-json={out}").assert_outcomes(passed=1, failed=1)
    record = next(r for r in json.loads(out.read_text())["items"] if r["stage"] == "execute")
    assert record["kind"] == "golden-mismatch" and record["reproducer"], record["message"]
    done = clean_run(pytester.path / record["reproducer"])
    assert done.returncode == 1, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["FAIL: check #0 at index [1]: actual (6, -2), expected (6, -3)"]

    # complex results against recorded outputs: part by part too
    (pytester.path / "d.mlir").write_text(
        "func.func @cdouble(%a: tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>> {\n"
        '  %0 = "stablehlo.add"(%a, %a) : (tensor<3xcomplex<f32>>, tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>\n'
        "  return %0 : tensor<3xcomplex<f32>>\n}\n")
    given = np.array([1 + 2j, 3 - 1j, 0.5j], np.complex64)
    wrong = given + given
    wrong[2] += 0.5  # sabotaged at one element
    np.savez(pytester.path / "d.cdouble.npz", input_0=given, output_0=wrong)
    pytester.runpytest("-p", "no:cacheprovider", f"--mlir-json={out}", "d.mlir").assert_outcomes(passed=1, failed=1)
    record = next(r for r in json.loads(out.read_text())["items"] if r["stage"] == "execute")
    done = clean_run(pytester.path / record["reproducer"])
    assert done.returncode == 1 and done.stdout.splitlines()[0] == (
        "FAIL: result #0 at index [2]: actual (0, 1), expected (0.5, 1)"), done.stdout
