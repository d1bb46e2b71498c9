"""A snippet that never returns (issue 54): its timed-out execute keeps its folder and a
``reproduce.sh`` bounded by the item's timeout, and ``export-lit --timeout`` gives up in time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SPIN = """func.func @spin(%n: i64) -> i64 {
  %r = scf.while (%i = %n) : (i64) -> i64 {
    %true = arith.constant true
    scf.condition(%true) %i : i64
  } do {
  ^bb0(%i: i64):
    %one = arith.constant 1 : i64
    %next = arith.addi %i, %one : i64
    scf.yield %next : i64
  }
  return %r : i64
}
"""


def test_a_timed_out_execute_keeps_a_bounded_reproducer_and_export_lit_takes_a_timeout(
        pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_mlir_snippets.tools import cli

    (pytester.path / "hang.mlir").write_text(SPIN)
    result = pytester.runpytest("-p", "no:cacheprovider", "--mlir-timeout=3", "hang.mlir")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*timeout: @spin*", "*Captured reproducer*", "sh */spin/cpu/reproduce.sh"])
    script = next(pytester.path.glob("*_mlir_snippets/hang.mlir/spin/cpu/reproduce.sh"))
    assert " -k 5 3 " in script.read_text()  # coreutils' timeout, the item's 3 s
    ran = subprocess.run(["/bin/sh", str(script)], env={"PATH": str(Path(sys.executable).parent)},
                         capture_output=True, text=True, cwd="/", timeout=60)
    assert ran.returncode == 124, ran.stderr[-500:]  # timeout's status: the time was up

    capsys.readouterr()
    assert cli.main(["export-lit", "hang.mlir::spin", "--timeout", "1"]) == 2
    assert "timeout" in capsys.readouterr().err
