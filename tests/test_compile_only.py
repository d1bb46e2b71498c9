"""Compile-only runs (``--mlir-skip-exec``) stop at the LLVM dialect, checked translatable
op by op: no ExecutionEngine (whose destruction generates machine code nothing runs)."""

from __future__ import annotations

import pytest

from pytest_mlir_snippets.protocol import Options
from pytest_mlir_snippets.worker.targets.cpu import CpuBackend

ADD = """func.func @partial(%a: i32, %b: i32) -> i32 {
  %0 = arith.addi %a, %b : i32
  return %0 : i32
}
"""


def test_a_compile_only_function_gets_no_engine() -> None:
    backend = CpuBackend()
    compiled = backend.compile(ADD, "partial", Options(skip_exec=True, print_ir=True))
    assert compiled.handle is None and "llvm.func @partial" in compiled.ir
    assert backend.compile(ADD, "partial", Options()).handle is not None


def test_untranslatable_ops_fail_alike_with_and_without_execution(pytester: pytest.Pytester, run_items) -> None:
    pytester.makefile(".mlir", partial=ADD)
    messages = []
    for skip in (["--mlir-skip-exec"], []):
        result, props = run_items("--mlir-no-cache", "--mlir-pipeline=builtin.module(convert-arith-to-llvm)", *skip)
        compile_item = props["partial.mlir::partial[compile]"]
        assert compile_item["mlir_kind"] == "compile-error", result.stdout.str()
        messages.append(compile_item["mlir_diagnostics"].splitlines()[0])  # the engine's adds a note
    assert "missing `LLVMTranslationDialectInterface` registration for dialect for op: func.func" in messages[0]
    assert messages[0] == messages[1]
