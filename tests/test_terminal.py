"""What the terminal shows (issue 54): a pass's golden and tolerance under ``-rA``; a crash's
native stack and failing step, without the worker's Python frames or faulthandler's module
list; IREE's "newer release" hint only where it may be true."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pytest_mlir_snippets.items.failures import shown_stderr
from pytest_mlir_snippets.mlirtext.ireeops import newer_iree_syntax

WORKER_SAID = """python: MemRefToLLVM.cpp:1007: Assertion `integralElementType.getWidth() >= 8' failed.
Fatal Python error: Aborted

Current thread 0x00007ffff7fbeb80 (most recent call first):
  File "/src/pytest_mlir_snippets/worker/lowering/mlirtools.py", line 173 in run_passes
  File "<frozen runpy>", line 198 in _run_module_as_main

Extension modules: numpy._core._multiarray_umath, numpy.linalg._umath_linalg (total: 2)
"""
SCALE = """func.func @scale(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

func.func @load_i1(%m: memref<4xi1>, %i: index) -> i1 {
  %0 = memref.load %m[%i] : memref<4xi1>
  return %0 : i1
}
"""
# a user pipeline without the plugin's i1 step: finalize-memref-to-llvm asserts on the i1 load
PIPELINE = "builtin.module(finalize-memref-to-llvm, convert-func-to-llvm, reconcile-unrealized-casts)"


def test_the_shown_output_of_a_crash_leaves_out_the_workers_python_frames() -> None:
    assert shown_stderr(WORKER_SAID) == (
        "python: MemRefToLLVM.cpp:1007: Assertion `integralElementType.getWidth() >= 8' failed.\n"
        "Fatal Python error: Aborted\n")
    assert shown_stderr("error: no faulthandler here\n  File x\n") == "error: no faulthandler here\n  File x\n"


def test_the_newer_iree_hint_is_given_only_where_it_may_be_true() -> None:
    assert not newer_iree_syntax(["custom op 'linalg.add' is unknown (tried 'func.linalg.add' as well)"])
    assert newer_iree_syntax(["custom op 'flow.dispatch.foo' is unknown"])  # IREE's own dialect
    assert newer_iree_syntax(["expected attribute value"])  # a known op written another way


def test_rA_shows_a_pass_golden_and_a_crash_native_stack(pytester: pytest.Pytester) -> None:
    (pytester.path / "ops.mlir").write_text(SCALE)
    given = np.arange(4, dtype=np.float32)
    np.savez(pytester.path / "ops.scale.npz", input_0=given, output_0=given + given)
    out = pytester.path / "records.json"
    passed = pytester.runpytest("-p", "no:cacheprovider", "-rA", "-v", "ops.mlir::scale")
    passed.assert_outcomes(passed=2)
    passed.stdout.fnmatch_lines(["*= PASSES =*", "*scale[[]execute[]]*", "*Captured golden call*",
                                 "golden: recorded: recorded outputs (ops.scale.npz)", "tolerance: atol *, rtol *"])
    crashed = pytester.runpytest("-p", "no:cacheprovider", "-rA", f"--mlir-pipeline={PIPELINE}", "--mlir-skip-exec",
                                 f"--mlir-json={out}", "ops.mlir::load_i1")
    crashed.assert_outcomes(failed=1)
    crashed.stdout.fnmatch_lines(["*killed by SIGABRT in finalize-memref-to-llvm*", "Fatal Python error: Aborted",
                                  "*Captured reproducer call*", "*Captured native stack (reproduce.sh) call*",
                                  "Stack dump:", "0.*Program arguments: *mlir-opt*finalize-memref-to-llvm*"])
    text = crashed.stdout.str()
    assert 'File "' not in text and "Extension modules" not in text and "most recent call first" not in text
    record = json.loads(out.read_text())["items"][0]
    assert "Extension modules" not in record["output"] and "getWidth() >= 8" in record["output"]


def test_an_untranslatable_op_without_a_location_points_at_the_line_it_came_from() -> None:
    from mlir import ir

    from pytest_mlir_snippets.worker.lowering.translatable import untranslatable

    text = ('module {\n  llvm.func @f(%a: f32) -> i32 {\n    %0 = llvm.fadd %a, %a : f32 loc("-":7:5)\n'
            '    %1 = builtin.unrealized_conversion_cast %0 : f32 to i32 loc(unknown)\n'
            '    llvm.return %1 : i32 loc("-":9:5)\n  } loc("-":6:3)\n}\n')
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        found = untranslatable(ir.Module.parse(text))
        assert [(d.line, d.column) for d in found] == [(7, 5)]  # the op before it: fadd's line
        alone = untranslatable(ir.Module.parse(text.replace('%0 = llvm.fadd %a, %a : f32 loc("-":7:5)',
                                                            '%0 = llvm.fadd %a, %a : f32 loc(unknown)')))
        assert [(d.line, d.column) for d in alone] == [(6, 3)]  # none before it: the function's
