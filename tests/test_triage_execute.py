"""Triage of execute failures (issue 43): a driver module that calls the compiled function on
the item's inputs and compares its results with the golden, ``reproduce.sh`` that runs it
with upstream's tools in a clean shell and fails as the item did, and ``export-lit``."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pytest_mlir_snippets.mlirtext.litscript import tool
from pytest_mlir_snippets.worker.lowering.runtime_libs import runner_libraries
from pytest_mlir_snippets.worker.targets.cpu import default_pipeline
from pytest_mlir_snippets.worker.triage.driver import main_text, slot_of
from pytest_mlir_snippets.worker.triage.drivercompare import Bound

OPS = """func.func @scale(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = arith.addf %a, %a : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// Loads 2^40 elements past the end of its input: a segfault.
func.func @wild_load(%t: tensor<4xf32>) -> f32 {
  %far = arith.constant 1099511627776 : index
  %0 = tensor.extract %t[%far] : tensor<4xf32>
  return %0 : f32
}

func.func @relu(%a: !torch.vtensor<[2,3],f32>) -> !torch.vtensor<[2,3],f32> {
  %0 = torch.aten.relu %a : !torch.vtensor<[2,3],f32> -> !torch.vtensor<[2,3],f32>
  return %0 : !torch.vtensor<[2,3],f32>
}
"""
# the bufferized form the driver calls (what cpu_driver.py finds after prepare_for_llvm)
IDENTITY = """module {
  func.func @same(%a: memref<3xf32>, %b: memref<2xi32>) -> (memref<3xf32>, memref<2xi32>) {
    return %a, %b : memref<3xf32>, memref<2xi32>
  }
"""
CLEAN = {"PATH": str(Path(sys.executable).parent)}  # the venv's bin only


def _driven(given: list[np.ndarray], expected: list[np.ndarray], tolerances: list[Bound | None],
            tmp_path: Path) -> str:
    """What the driver of ``@same`` prints, lowered by the cpu target's tail and run by mlir-runner."""
    slots = [slot_of("memref<3xf32>"), slot_of("memref<2xi32>")]
    module = IDENTITY + main_text("same", slots, slots, given, expected, tolerances) + "\n}\n"
    (tmp_path / "d.mlir").write_text(module)
    lowered = subprocess.run([tool("mlir-opt"), str(tmp_path / "d.mlir"), f"--pass-pipeline={default_pipeline()[1]}"],
                             capture_output=True, text=True, check=True).stdout
    return subprocess.run([tool("mlir-runner"), "-e", "main", "-entry-point-result=void",
                           f"-shared-libs={','.join(runner_libraries()[:2])}"], input=lowered,
                          capture_output=True, text=True, check=True).stdout


def test_the_driver_compares_at_the_items_tolerance_and_names_the_first_difference(tmp_path: Path) -> None:
    values = [np.array([1.0, np.nan, -2.0], np.float32), np.array([7, -3], np.int32)]
    near = [np.array([1.0009, np.nan, -2.0], np.float32), values[1]]  # within atol; NaN matches NaN
    assert _driven(values, near, [(1e-3, 0.0, 0), None], tmp_path).splitlines() == ["PASS"]
    two_ulp = np.array([1.0, np.nan, np.nextafter(np.nextafter(np.float32(-2), 0), 0)], np.float32)
    assert _driven(values, [two_ulp, values[1]], [(0.0, 0.0, 2), None], tmp_path).splitlines() == ["PASS"]
    three_ulp = np.array([1.0, np.nan, np.nextafter(two_ulp[2], 0)], np.float32)  # sabotaged: each one differs
    assert _driven(values, [three_ulp, np.array([7, -4], np.int32)], [(0.0, 0.0, 2), None], tmp_path).splitlines() == [
        "FAIL: result #0 at index [2]: actual -2, expected -2 (difference -3.57628e-07)",
        "FAIL: result #1 at index [1]: actual -3, expected -4"]


def _run(script: Path) -> subprocess.CompletedProcess[str]:
    """``script`` in a clean shell: no environment, the venv's bin alone on PATH."""
    return subprocess.run(["/bin/sh", str(script)], env=CLEAN, capture_output=True, text=True, cwd="/")


@pytest.mark.slow
def test_failed_executes_hand_over_reproducers_and_export_lit_round_trips(pytester: pytest.Pytester) -> None:
    from pytest_mlir_snippets.tools import cli

    (pytester.path / "ops.mlir").write_text(OPS)
    given = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    np.savez(pytester.path / "ops.scale.npz", input_0=given, output_0=(given + given) * np.float32(1.5))
    np.savez(pytester.path / "ops.relu.npz", input_0=given, output_0=np.maximum(given, 0) * np.float32(2))
    out = pytester.path / "records.json"
    result = pytester.runpytest("-p", "no:cacheprovider", f"--mlir-json={out}", "ops.mlir")
    result.assert_outcomes(passed=3, failed=3)
    result.stdout.fnmatch_lines(["*golden-mismatch: @scale*", "*Captured reproducer*", "sh */scale/cpu/reproduce.sh",
                                 "*crash: @wild_load*", "*Captured reproducer*", "sh */wild_load/cpu/reproduce.sh"])
    records = {r["nodeid"]: r for r in json.loads(out.read_text())["items"]}
    scripts = {name: pytester.path / records[f"ops.mlir::{name}[execute]"]["reproducer"]
               for name in ("scale", "wild_load", "relu")}
    assert scripts["scale"] == pytester.path / "ops_mlir_snippets/ops.mlir/scale/cpu/reproduce.sh"
    mismatch = _run(scripts["scale"])  # a wrong result: FileCheck fails on the driver's FAIL line
    assert mismatch.returncode == 1 and "FAIL: result #0 at index [0, 0]" in mismatch.stdout
    assert "CHECK: {{^}}PASS" in mismatch.stderr and "expected string not found" in mismatch.stderr
    torch = _run(scripts["relu"])  # a torch-dialect input: its legalization is in the IR the driver holds
    assert torch.returncode == 1 and "FAIL: result #0 at index [0, 0]" in torch.stdout, torch.stdout
    crash = _run(scripts["wild_load"])  # a segfault: the script dies of the same signal
    assert crash.returncode == -signal.SIGSEGV, crash.stderr[-500:]
    driver = (scripts["scale"].parent / "driver.mlir").read_text()
    assert "plugin:prepare_for_llvm" in driver and 'memref.global "private" @driver_input0' in driver

    # fixed: the recorded outputs right; the function exported, and a copy with its golden scaled
    np.savez(pytester.path / "ops.scale.npz", input_0=given, output_0=given + given)
    (pytester.path / "lit").mkdir()
    assert cli.main(["export-lit", "ops.mlir::scale", "--out", str(pytester.path / "lit/good.mlir")]) == 0
    good = (pytester.path / "lit/good.mlir").read_text()
    assert re.search(r"^// RUN: mlir-opt %s --pass-pipeline=", good, re.M) and "// CHECK: {{^}}PASS" in good
    assert "-shared-libs=%mlir_c_runner_utils,%mlir_runner_utils" in good

    def scaled(match: re.Match[str]) -> str:
        return re.sub(r"-?\d+\.\d+(?:e[-+]\d+)?", lambda m: repr(float(m.group()) * 1.5), match.group())

    (pytester.path / "lit/bad.mlir").write_text(re.sub(r"@driver_expected0 : .*", scaled, good))
    again = pytester.runpytest("-p", "no:cacheprovider", "ops.mlir::scale[execute]", "lit")
    again.assert_outcomes(passed=4, failed=1)  # scale, good's two items and bad's compile pass
    again.stdout.fnmatch_lines(["FAILED lit/bad.mlir::main[[]execute[]]*"])
    assert not scripts["scale"].parent.exists()  # its reproducer went with the failure
    assert cli.main(["export-lit", "ops.mlir::nowhere"]) == 2
