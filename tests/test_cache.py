"""The compile cache: verdicts kept in pytest's cache directory, shared by xdist workers."""

from __future__ import annotations

import pytest

OPS = """func.func @add_0(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @mul_0(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.mulf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @bad_0(%a: tensor<4xf32>) -> tensor<4xi32> {
  %0 = arith.addf %a, %a : tensor<4xi32>
  return %0 : tensor<4xi32>
}
"""


def compile_props(pytester: pytest.Pytester, *args: str) -> dict[str, dict[str, str]]:
    from conftest import item_properties

    xml = pytester.path / "junit.xml"
    pytester.runpytest("--mlir-skip-exec", f"--junitxml={xml}", *args)
    return item_properties(xml)


def test_a_warm_rerun_compiles_nothing(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=OPS)
    folder = pytester.path / ".pytest_cache" / "d" / "mlir-snippets-compile"
    stale = folder / "0123456789abcdef" / "ab" / "abcdef"  # an older toolchain's entry
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"old")
    cold = compile_props(pytester, "-n", "2")  # two workers write the cache at once
    assert {n: p.get("mlir_cache") for n, p in cold.items()} == dict.fromkeys(cold)
    assert not stale.exists() and len(list(folder.iterdir())) == 1  # one toolchain's folder
    warm = compile_props(pytester)
    assert {p["mlir_cache"] for p in warm.values()} == {"hit"}
    assert warm["ops.mlir::bad_0[compile]"]["mlir_kind"] == "compile-error"  # verdicts, failures too
    assert "use of value '%a' expects different type" in warm["ops.mlir::bad_0[compile]"]["mlir_diagnostics"]
    assert {p.get("mlir_cache") for p in compile_props(pytester, "--mlir-no-cache").values()} == {None}
    # a changed function, or a changed option, is compiled again; the others are not
    pytester.makefile(".mlir", ops=OPS.replace("arith.mulf", "arith.subf"))
    edited = compile_props(pytester)
    assert {n: p.get("mlir_cache") for n, p in edited.items()} == {
        "ops.mlir::add_0[compile]": "hit", "ops.mlir::mul_0[compile]": None, "ops.mlir::bad_0[compile]": "hit"}
    assert {p.get("mlir_cache") for p in compile_props(pytester, "--mlir-opt-level=2").values()} == {None}
