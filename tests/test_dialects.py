"""Dialects: a typo is a compile-error with a hint, another target's dialect is
unsupported, and --mlir-strict makes unsupported items and empty runs fail."""

from __future__ import annotations

import pytest

TYPOS = """func.func @generic_0(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "lianlg.abs"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @custom_0(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lianlg.abs %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
TTIR = """func.func @tt_0(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ttir.abs"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def test_a_misspelled_dialect_is_a_compile_error_with_a_hint(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", typos=TYPOS, tt=TTIR)
    result = pytester.runpytest("-p", "no:cacheprovider", "--mlir-skip-exec", "-rs")
    result.assert_outcomes(failed=2, skipped=1)
    result.stdout.fnmatch_lines([
        "compile-error: @generic_0 (typos.mlir:1) [[]compile[]]",
        "dialect 'lianlg' is known to no target (did you mean 'linalg'?)",
        "*typos.mlir:2:8: error: unregistered operation 'lianlg.abs'",
        "compile-error: @custom_0 (typos.mlir:5) [[]compile[]]",
        "dialect 'lianlg' is known to no target (did you mean 'linalg'?)",
        "*typos.mlir:6:8: error: Dialect `lianlg' not found for custom op 'lianlg.abs'*",
    ])
    result.stdout.fnmatch_lines(["SKIPPED [[]1[]] tt.mlir:1: dialect 'ttir' is not available for "
                                 "target cpu; "
                                 "ttmetal, ttnn take it"])


def test_strict_fails_unsupported_items_and_runs_with_no_outcome(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", tt=TTIR)
    lenient = pytester.runpytest("-p", "no:cacheprovider")
    lenient.assert_outcomes(skipped=2)
    assert lenient.ret == pytest.ExitCode.OK
    lenient.stdout.fnmatch_lines(["nothing ran to an outcome: 2 item(s) skipped across 1 file(s)*"])
    assert "--mlir-strict" not in lenient.stdout.str()
    strict = pytester.runpytest("-p", "no:cacheprovider", "--mlir-strict")
    strict.assert_outcomes(failed=2)
    strict.stdout.fnmatch_lines(["unsupported: @tt_0 (tt.mlir:1) [[]compile[]]"])
    (pytester.path / "tt.mlir").write_text("// UNSUPPORTED: cpu\n" + TTIR)  # declared: still a skip
    pytester.makeini("[pytest]\nmlir_strict = true\n")
    nothing = pytester.runpytest("-p", "no:cacheprovider")
    nothing.assert_outcomes(skipped=2)
    assert nothing.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    nothing.stdout.fnmatch_lines(["nothing ran to an outcome: 2 item(s) skipped across 1 file(s)*",
                                  "--mlir-strict: a run where nothing ran to an outcome fails (exit 5)"])
