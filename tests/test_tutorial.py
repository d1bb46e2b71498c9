"""docs/tutorial.md as a user follows it: its ``sh`` blocks in order, in one folder, each
doing what the page says it does (a pass on iree-cpu, a pinned golden, a mismatch the
bisection puts before any pass, a reproducer that fails, a reduced snippet)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "tutorial.md"
# the options the tutorial teaches (tests/test_docs_blocks.py checks that its blocks' options are named here)
TAUGHT = ("--from", "--mlir-bisect", "--out")
HAS_IREE = all(importlib.util.find_spec(m) is not None for m in ("iree.compiler", "iree.runtime"))


def blocks() -> list[str]:
    return re.findall(r"^```sh\n(.*?)^```", PAGE.read_text(), re.S | re.M)


@pytest.mark.skipif(not HAS_IREE, reason="the tutorial's first golden is iree-cpu's")
def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    said = []
    for block in blocks():
        done = subprocess.run(["bash", "-e", "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300, check=False)
        assert done.returncode == 0, f"{block}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        said.append(done.stdout + done.stderr)
    text = "\n".join(blocks())
    assert all(option in text for option in TAUGHT)
    _, passed, report, pinned, broken, reproduced, fixed, compile_failed, reduced = said
    assert "PASSED ops.mlir::scale_add[execute]" in passed and "differential:iree-cpu" in report
    assert "wrote ops.scale_add.npz" in pinned and "recorded 1" in pinned
    assert "golden-mismatch" in broken and "diverged after: front-end" in broken and "exit code: 1" in broken
    assert "FAIL: result #0" in reproduced and "exit code: 1" in reproduced
    assert "2 passed" in fixed
    assert "lowering failed in convert-math-to-libm" in compile_failed and "compile failed" in compile_failed
    assert "reproduce.sh" in compile_failed
    assert "math.clampf %arg0" in reduced and "arith.addf" not in reduced
