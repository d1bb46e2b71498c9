"""Which memref arguments of a function without results are its outputs (issue 54): all of
them, unless a ``// mlir-snippets: outputs=N`` line above the function names those it writes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pytest_mlir_snippets.mlirtext.directives import DirectiveError, directive

AXPY = """{line}func.func @axpy(%x: memref<4xf32>, %y: memref<4xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {{
    %a = memref.load %x[%i] : memref<4xf32>
    %b = memref.load %y[%i] : memref<4xf32>
    %p = arith.mulf %a, %two : f32
    %s = arith.addf %p, %b : f32
    memref.store %s, %y[%i] : memref<4xf32>
  }}
  return
}}
"""


def test_an_outputs_line_is_read_with_the_tolerance() -> None:
    found = directive(["// mlir-snippets: outputs=1,2 atol=1e-3"])
    assert (found.outputs, found.atol, found.empty) == ((1, 2), 1e-3, False)
    assert directive(["// mlir-snippets: outputs=0"]).empty  # no tolerance set: no tolerance source
    with pytest.raises(DirectiveError, match="outputs needs argument numbers"):
        directive(["// mlir-snippets: outputs=%y"])


def test_only_the_named_memref_arguments_are_compared(pytester: pytest.Pytester) -> None:
    x, y = np.arange(4, dtype=np.float32), np.ones(4, np.float32)
    (pytester.path / "all.mlir").write_text(AXPY.format(line=""))
    (pytester.path / "one.mlir").write_text(AXPY.format(line="// mlir-snippets: outputs=1\n"))
    (pytester.path / "wrong.mlir").write_text(AXPY.format(line="// mlir-snippets: outputs=1\n"))
    (pytester.path / "nomemref.mlir").write_text(AXPY.format(line="// mlir-snippets: outputs=2\n"))
    for stem in ("all", "one"):
        np.savez(pytester.path / f"{stem}.axpy.npz", input_0=x, input_1=y, output_0=2 * x + y)
    np.savez(pytester.path / "wrong.axpy.npz", input_0=x, input_1=y, output_0=2 * x + y + 1)  # sabotaged
    out = pytester.path / "records.json"
    result = pytester.runpytest("-p", "no:cacheprovider", f"--mlir-json={out}", "-k", "execute")
    records = {r["file"]: r for r in json.loads(out.read_text())["items"] if r["stage"] == "execute"}
    assert records["one.mlir"]["kind"] == "pass", records["one.mlir"]["message"]
    assert records["all.mlir"]["kind"] == "execute-error"  # every memref argument is an output: 2 expected
    assert records["wrong.mlir"]["kind"] == "golden-mismatch"
    assert records["nomemref.mlir"]["kind"] == "execute-error"
    assert "argument(s) #2 of 2 not a memref" in records["nomemref.mlir"]["message"]
    result.assert_outcomes(passed=1, failed=3, deselected=4)
