"""Triage (issue 43) on iree-cpu with IREE's own tools: a failed execute's ``reproduce.sh``
(``iree-compile`` then ``iree-run-module --expected_output``), ``--mlir-bisect`` by
``--compile-to`` phase."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pytest_mlir_snippets.golden.compare import Tolerance
from pytest_mlir_snippets.worker.triage.iree_driver import thresholds

try:
    from test_iree import needs_iree
except ImportError:  # run from elsewhere
    needs_iree = pytest.mark.skip(reason="tests/test_iree.py not importable")

BIN = str(Path(sys.executable).parent)
OPS = """func.func @scale(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = arith.addf %a, %a : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// Reads its input at the indices it is given, inside a dispatch (no bounds check there)
func.func @gather(%t: tensor<4xf32>, %idx: tensor<4xi64>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]} ins(%idx : tensor<4xi64>) outs(%e : tensor<4xf32>) {
  ^bb0(%i: i64, %o: f32):
    %j = arith.index_cast %i : i64 to index
    %v = tensor.extract %t[%j] : tensor<4xf32>
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""

RELU = """func.func @relu(%a: !torch.vtensor<[2,3],f32>) -> !torch.vtensor<[2,3],f32> {
  %0 = torch.aten.relu %a : !torch.vtensor<[2,3],f32> -> !torch.vtensor<[2,3],f32>
  return %0 : !torch.vtensor<[2,3],f32>
}

func.func @twice_i(%a: tensor<4xi32>) -> tensor<4xi32> {
  %0 = arith.addi %a, %a : tensor<4xi32>
  return %0 : tensor<4xi32>
}

func.func @first(%t: tensor<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %0 = tensor.extract %t[%c0] : tensor<4xf32>
  return %0 : f32
}
"""


def clean_run(script: Path) -> subprocess.CompletedProcess[str]:
    """``script`` run as ``env -i PATH=<venv>/bin /bin/sh script`` from elsewhere."""
    return subprocess.run(["/bin/sh", str(script)], env={"PATH": BIN}, capture_output=True, text=True, cwd="/")


def test_the_items_tolerance_becomes_iree_run_modules_flags() -> None:
    values = [np.array([1.0, 4.0], np.float32), np.array([2.0], np.float64), np.array([3], np.int32)]
    flags = thresholds(Tolerance(atol=1e-3, rtol=1e-4), values)
    assert flags == ("--expected_f32_threshold=0.001", "--expected_f64_threshold=0.001", "--expected_rtol=0.0001")
    widened = thresholds(Tolerance(atol=0.0, rtol=0.0, ulp=2), values[:1])  # 2 ULP of 4.0 in f32
    assert widened == (f"--expected_f32_threshold={2 * float(np.spacing(np.float32(4.0))):.9g}", "--expected_rtol=0")
    assert thresholds(Tolerance(atol=1.0), values[2:]) == ()  # integers: IREE compares them exactly


@needs_iree
@pytest.mark.slow
def test_failed_iree_executes_reproduce_with_irees_tools(pytester: pytest.Pytester) -> None:
    """One run: recorded outputs 1.5 times what ``@scale`` computes, a gather at an index
    2^40 past its input that kills the worker by SIGSEGV, a torch-dialect relu whose recorded
    outputs are 0.5 too high; then a rerun with right outputs."""
    (pytester.path / "ops.mlir").write_text(OPS)
    (pytester.path / "torch.mlir").write_text(RELU)
    x = np.random.default_rng(0).random((2, 3), dtype=np.float32)
    np.savez(pytester.path / "torch.relu.npz", input_0=x - 0.5, output_0=np.maximum(x - 0.5, 0) + 0.5)
    np.savez(pytester.path / "torch.twice_i.npz", input_0=np.arange(4, dtype=np.int32),
             output_0=np.array([0, 2, 4, 7], np.int32))
    np.savez(pytester.path / "torch.first.npz", input_0=np.ones(4, np.float32), output_0=np.float32(3))
    np.savez(pytester.path / "ops.scale.npz", input_0=x, output_0=(x + x) * 1.5)
    np.savez(pytester.path / "ops.gather.npz", input_0=np.ones(4, np.float32), input_1=np.full(4, 1 << 40, np.int64))
    out = pytester.path / "records.json"
    args = ("-p", "no:cacheprovider", "--mlir-target=iree-cpu", f"--mlir-json={out}")
    result = pytester.runpytest(*args)
    result.stdout.fnmatch_lines(["*Captured reproducer call*", "sh */ops_mlir_snippets/ops.mlir/scale/iree-cpu/"
                                 "reproduce.sh"])
    result.stdout.fnmatch_lines(["golden-mismatch: @first*", "*Captured reproducer call*",
                                 "none: no reproducer: result #0 is a scalar, which iree-run-module cannot compare*"])
    records = {(r["function"], r["stage"]): r for r in json.loads(out.read_text())["items"]}
    mismatch, crash = records["scale", "execute"], records["gather", "execute"]
    assert (mismatch["kind"], crash["kind"]) == ("golden-mismatch", "crash")
    script = pytester.path / mismatch["reproducer"]
    text = script.read_text()
    assert "_mlir_libs/iree-compile snippet.mlir" in text and "_runtime_libs/iree-run-module" in text
    assert "--expected_output=2x3xf32=@expected_output_0.bin" in text and "--expected_f32_threshold=" in text
    failed = clean_run(script)
    assert failed.returncode == 1 and "[FAILED] result[0]" in failed.stdout  # IREE's own comparison
    assert clean_run(pytester.path / crash["reproducer"]).returncode == -signal.SIGSEGV
    torch_script = pytester.path / records["relu", "execute"]["reproducer"]
    assert "--iree-input-type=torch -o reproduce.vmfb" in torch_script.read_text()  # IREE's torch input route
    relu = clean_run(torch_script)
    assert relu.returncode == 1 and "[FAILED] result[0]" in relu.stdout
    # integers compared as the signless i32 they are (an .npy of int32 would read as si32)
    ints = clean_run(pytester.path / records["twice_i", "execute"]["reproducer"])
    assert ints.returncode == 1 and "element at index 3 (6) does not match the expected (7)" in ints.stdout
    # sabotage: the golden the script holds made right, the script passes; a little off, it fails again
    expected = script.parent / "expected_output_0.bin"
    (x + x).tofile(expected)
    assert clean_run(script).returncode == 0
    ((x + x) * 1.001).tofile(expected)
    assert clean_run(script).returncode == 1
    # the recorded outputs made right: the item passes and its reproducer's folder goes
    np.savez(pytester.path / "ops.scale.npz", input_0=x, output_0=x + x)
    pytester.runpytest(*args, "ops.mlir", "-k", "scale").assert_outcomes(passed=2)
    assert not script.parent.exists()


# f64 inside, f32 at the boundary: 1e8 added and taken away again loses the input in f32
WIDE = """func.func @wide(%a: tensor<4xf32>) -> tensor<4xf32> {
  %big = arith.constant dense<1.0e8> : tensor<4xf64>
  %w = arith.extf %a : tensor<4xf32> to tensor<4xf64>
  %s = arith.addf %w, %big : tensor<4xf64>
  %d = arith.subf %s, %big : tensor<4xf64>
  %0 = arith.truncf %d : tensor<4xf64> to tensor<4xf32>
  return %0 : tensor<4xf32>
}

func.func @twice(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


@needs_iree
@pytest.mark.slow
def test_iree_bisect_names_the_compile_to_phase_or_the_front_end(pytester: pytest.Pytester) -> None:
    """An IREE config that demotes f64 to f32 (IREE's input phase) against the cpu target's
    f64 lowering, and recorded outputs that are wrong (7 where 6 is right)."""
    (pytester.path / "ops.mlir").write_text(WIDE)
    np.savez(pytester.path / "ops.twice.npz", input_0=np.arange(4, dtype=np.float32),
             output_0=np.array([0, 2, 4, 7], np.float32))
    config = pytester.path / "demote.json"
    config.write_text(json.dumps({"config_name": "demote", "iree_compile_flags": ["--iree-input-demote-f64-to-f32"],
                                  "iree_run_module_flags": []}))
    out = pytester.path / "records.json"
    args = ("-p", "no:cacheprovider", "--mlir-target=iree-cpu", f"--mlir-json={out}", "--mlir-bisect")
    result = pytester.runpytest(*args, f"--mlir-expectations={config}")
    result.stdout.fnmatch_lines(["*Captured bisection call*", "diverged after: input", "cut after import: matches",
                                 "cut after input: differs", "*", "cut after vm: differs"])
    records = {r["function"]: r for r in json.loads(out.read_text())["items"] if r["stage"] == "execute"}
    assert records["wide"]["diverged_after"] == "input"
    assert records["twice"]["diverged_after"] == "front-end"  # even the plain compile differs
    result.stdout.fnmatch_lines(["*Captured bisection call*", "diverged after: front-end", "cut after import: differs"])
    # sabotage: without the config's flag the same function passes, nothing to bisect
    config.write_text(json.dumps({"config_name": "demote", "iree_compile_flags": [], "iree_run_module_flags": []}))
    again = pytester.runpytest(*args, f"--mlir-expectations={config}", "-k", "wide")
    again.assert_outcomes(passed=2)
    assert "bisection" not in again.stdout.str()
