"""Triage of what the plugin's own checks find (issue 54): ops a legalization leaves without
a lowering name the pass that left them and hand over a script that shows it; a function judged
by its check ops gets a driver and a reproducer when a check fails."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
