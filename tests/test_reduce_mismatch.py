"""``mlir-snippets reduce`` on what it cannot take as it is (issue 54): a mismatch with recorded
outputs keeps the function's interface and its failing output positions, a file that does not
parse is declined, and the result goes where the next run does not collect it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SOFTPLUS = """func.func @softplus(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = math.exp %x : tensor<8xf32>
  %one = arith.constant dense<1.0> : tensor<8xf32>
  %s = arith.addf %e, %one : tensor<8xf32>
  %l = math.log %s : tensor<8xf32>
  return %l : tensor<8xf32>
}
"""
GIVEN = np.linspace(-2.0, 2.0, 8, dtype=np.float32)


def mlir_snippets(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_mlir_snippets.tools.cli", *args], cwd=cwd,
                          capture_output=True, text=True, check=False, timeout=300)


def test_a_mismatch_with_recorded_outputs_keeps_its_interface_and_failing_positions(tmp_path: Path) -> None:
    from pytest_mlir_snippets.triage.interesting import Spec, failing_positions, failure_of, interesting, opened

    expected = np.log1p(np.exp(GIVEN)).astype(np.float32)
    expected[3] += 1.0  # the recorded golden is wrong at one position
    (tmp_path / "wrong.mlir").write_text(SOFTPLUS)
    np.savez(tmp_path / "wrong.softplus.npz", input_0=GIVEN, output_0=expected)
    spec = Spec("softplus", str(tmp_path / "wrong.mlir"), 1)
    golden = spec.golden()
    assert golden is not None
    sandbox = opened(spec)
    try:
        spec.kind, spec.first, spec.compiles = failure_of(sandbox, SOFTPLUS, spec, golden)
        assert spec.kind == "golden-mismatch"
        spec.interface, spec.positions = "(tensor<8xf32>) -> tensor<8xf32>", failing_positions(
            sandbox, SOFTPLUS, spec, golden)
        assert spec.positions == ((3,),)
        assert interesting(sandbox, SOFTPLUS.replace("%e = math.exp %x", "%e = math.exp %x "), spec, golden)
        # sabotaged: the identity mismatches too, everywhere; another interface
        identity = "func.func @softplus(%x: tensor<8xf32>) -> tensor<8xf32> {\n  return %x : tensor<8xf32>\n}\n"
        assert not interesting(sandbox, identity, spec, golden)
        assert not interesting(sandbox, identity.replace("8xf32", "?xf32"), spec, golden)
    finally:
        sandbox.close()

    done = mlir_snippets("reduce", "wrong.mlir::softplus", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "ops_mlir_snippets/wrong.mlir/softplus/cpu/reduced.mlir"
    assert f"wrote {out.relative_to(tmp_path)}" in done.stdout or f"wrote {out}" in done.stdout, done.stdout
    assert "math.log" in out.read_text()  # nothing smaller fails at position 3 alone
    assert not list(tmp_path.glob("*.reduced.mlir"))


def test_reduce_declines_a_file_that_does_not_parse_and_its_output_is_never_collected(
        tmp_path: Path, pytester: pytest.Pytester) -> None:
    (tmp_path / "broken.mlir").write_text(SOFTPLUS.replace("math.log %s", "math.logg %s"))
    done = mlir_snippets("reduce", "broken.mlir::softplus", cwd=tmp_path)
    assert done.returncode == 2, done.stdout
    assert "broken.mlir::softplus does not parse (" in done.stderr and "logg" in done.stderr, done.stderr
    assert "? ops" not in done.stdout

    (pytester.path / "ops_mlir_snippets/ops.mlir/f/cpu").mkdir(parents=True)
    (pytester.path / "ops_mlir_snippets/ops.mlir/f/cpu/reduced.mlir").write_text(SOFTPLUS)
    (pytester.path / "ops.mlir").write_text(SOFTPLUS)
    pytester.runpytest("-p", "no:cacheprovider", "--collect-only", "-q").stdout.fnmatch_lines(
        ["ops.mlir::softplus[[]compile[]]", "ops.mlir::softplus[[]execute[]]", "2 tests collected*"])
