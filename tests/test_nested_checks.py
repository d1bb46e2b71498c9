"""Check ops where they stand (issue 42): inside ``stablehlo.if``, ``stablehlo.while``,
``tosa.cond_if``, ``scf.for`` and callees, each execution compares its operands, as IREE's
check module and StableHLO's interpreter do; a check on a path not taken compares nothing.
One pytester run over a correct file and its sabotaged copy."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow

STABLEHLO = """func.func @if_check() {
  %pred = stablehlo.constant dense<true> : tensor<i1>
  %x = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %r = "stablehlo.if"(%pred) ({
    %y = stablehlo.add %x, %x : tensor<2xf32>
    check.expect_almost_eq_const %y, dense<[2.0, 4.0]> : tensor<2xf32>
    stablehlo.return %y : tensor<2xf32>
  }, {
    check.expect_eq_const %x, dense<[9.0, 9.0]> : tensor<2xf32>
    stablehlo.return %x : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  check.expect_eq_const %r, dense<[2.0, 4.0]> : tensor<2xf32>
  func.return
}

func.func @while_check() {
  %i0 = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %three = stablehlo.constant dense<3> : tensor<i64>
  %r = stablehlo.while(%i = %i0) : tensor<i64>
  cond {
    %c = stablehlo.compare LT, %i, %three : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %lt = stablehlo.compare LT, %i, %three : (tensor<i64>, tensor<i64>) -> tensor<i1>
    check.expect_eq_const %lt, dense<true> : tensor<i1>
    %n = stablehlo.add %i, %one : tensor<i64>
    stablehlo.return %n : tensor<i64>
  }
  check.expect_eq_const %r, dense<3> : tensor<i64>
  func.return
}

func.func @types_check() {
  %pred = stablehlo.constant dense<true> : tensor<i1>
  %u = stablehlo.constant dense<[1, 200]> : tensor<2xui8>
  %c = stablehlo.constant dense<[(1.0, 2.0)]> : tensor<1xcomplex<f32>>
  %f = stablehlo.constant dense<[1.5, 2.0]> : tensor<2xf8E4M3FN>
  %b = stablehlo.constant dense<[1.5, 2.0]> : tensor<2xbf16>
  %r = "stablehlo.if"(%pred) ({
    %u2 = stablehlo.add %u, %u : tensor<2xui8>
    check.expect_eq_const %u2, dense<[2, 144]> : tensor<2xui8>
    %c2 = stablehlo.add %c, %c : tensor<1xcomplex<f32>>
    check.expect_eq_const %c2, dense<[(2.0, 4.0)]> : tensor<1xcomplex<f32>>
    %f2 = stablehlo.add %f, %f : tensor<2xf8E4M3FN>
    check.expect_almost_eq_const %f2, dense<[3.0, 4.0]> : tensor<2xf8E4M3FN>
    %b2 = stablehlo.add %b, %b : tensor<2xbf16>
    check.expect_almost_eq_const %b2, dense<[3.0, 4.0]> : tensor<2xbf16>
    stablehlo.return %pred : tensor<i1>
  }, {
    stablehlo.return %pred : tensor<i1>
  }) : (tensor<i1>) -> tensor<i1>
  func.return
}
"""

IREE = """func.func @cond_if_check() {
  %c = util.unfoldable_constant dense<true> : tensor<i1>
  %x = util.unfoldable_constant dense<[1, 2]> : tensor<2xi32>
  %r = tosa.cond_if %c (%a = %x) : tensor<i1> (tensor<2xi32>) -> tensor<2xi32> {
  ^bb0(%a: tensor<2xi32>):
    %y = tosa.add %a, %a : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    check.expect_eq_const(%y, dense<[2, 4]> : tensor<2xi32>) : tensor<2xi32>
    tosa.yield %y : tensor<2xi32>
  } else {
  ^bb0(%a: tensor<2xi32>):
    check.expect_eq_const(%a, dense<[7, 7]> : tensor<2xi32>) : tensor<2xi32>
    tosa.yield %a : tensor<2xi32>
  }
  check.expect_eq_const(%r, dense<[2, 4]> : tensor<2xi32>) : tensor<2xi32>
  return
}

func.func @for_check() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %init = util.unfoldable_constant dense<0.0> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %init) -> (tensor<f32>) {
    %n = arith.addf %acc, %one : tensor<f32>
    %ok = arith.cmpi ult, %i, %c4 : index
    %t = arith.extui %ok : i1 to i32
    check.expect_true(%t) : i32
    scf.yield %n : tensor<f32>
  }
  check.expect_almost_eq_const(%r, dense<4.0> : tensor<f32>) : tensor<f32>
  return
}

func.func private @doubled(%v: tensor<2xi32>) -> tensor<2xi32> {
  %d = arith.addi %v, %v : tensor<2xi32>
  check.expect_eq_const(%d, dense<[2, 4]> : tensor<2xi32>) : tensor<2xi32>
  return %d : tensor<2xi32>
}

func.func @callee_check() {
  %x = util.unfoldable_constant dense<[1, 2]> : tensor<2xi32>
  %r = call @doubled(%x) : (tensor<2xi32>) -> tensor<2xi32>
  return
}
"""

# each sabotage: (text, replacement, the item that must fail, what its message must say)
SABOTAGE = [
    ("check.expect_almost_eq_const %y, dense<[2.0, 4.0]>", "check.expect_almost_eq_const %y, dense<[2.0, 5.0]>",
     "if_check", "bad_shlo.mlir:6:5: error: check.expect_almost_eq_const failed: execution 1 of 1"),
    ("%lt, dense<true>", "%lt, dense<false>", "while_check", "execution 1 of 3"),
    ("dense<[(2.0, 4.0)]>", "dense<[(2.0, 4.5)]>", "types_check", "(2+4j) (actual) vs (2+4.5j) (expected)"),
    ("check.expect_eq_const(%y, dense<[2, 4]>", "check.expect_eq_const(%y, dense<[2, 5]>", "cond_if_check",
     "execution 1 of 1: 1 of 2 element(s) not bitwise equal"),
    ("arith.cmpi ult, %i, %c4", "arith.cmpi ult, %i, %c1", "for_check", "execution 2 of 4"),
    ("check.expect_eq_const(%d, dense<[2, 4]>", "check.expect_eq_const(%d, dense<[2, 5]>", "callee_check",
     "bad_iree.mlir:37:3: error: check.expect_eq_const failed"),
]


def _sabotaged(text: str) -> str:
    for old, new, _, _ in SABOTAGE:
        text = text.replace(old, new) if old in text else text
    return text



def test_checks_in_regions_compare_each_execution(pytester: pytest.Pytester) -> None:
    pytest.importorskip("torch_mlir")
    for old, _, _, _ in SABOTAGE:
        assert (old in STABLEHLO) != (old in IREE)
    (pytester.path / "good_shlo.mlir").write_text(STABLEHLO)
    (pytester.path / "good_iree.mlir").write_text(IREE)
    (pytester.path / "bad_shlo.mlir").write_text(_sabotaged(STABLEHLO))
    (pytester.path / "bad_iree.mlir").write_text(_sabotaged(IREE))
    out = pytester.path / "records.json"
    pytester.runpytest("-p", "no:cacheprovider", "-n", "0", f"--mlir-json={out}", "-rA")
    found = {(r["file"].rsplit("/", 1)[-1], r["name"]): r for r in json.loads(out.read_text())["items"]}
    executes = {key: r for key, r in found.items() if key[1].endswith("[execute]")}
    assert len(executes) == 12, sorted(executes)
    for (file, name), record in executes.items():
        if file.startswith("good"):  # the untaken branches' checks (expecting 9s and 7s) compared nothing
            assert record["kind"] == "pass" and record["golden"] == "checks", (name, record["message"])
            continue
        item = name.removesuffix("[execute]")
        assert record["kind"] == "golden-mismatch", (name, record["message"])
        says = [said for _, _, which, said in SABOTAGE if which == item]
        assert len(says) == 1 and says[0] in "\n".join([record["message"], *record.get("diagnostics", [])]), \
            (item, record["message"])


def test_other_targets_refuse_checks_they_cannot_record(pytester: pytest.Pytester) -> None:
    """Only the cpu target's engine calls back into the worker while the code runs: on cuda
    (compiled to PTX on any machine) a check in a region is unsupported, naming it, not a
    compile error of the lowering."""
    pytester.makefile(".mlir", ops=STABLEHLO.split("func.func @while_check")[0])
    result = pytester.runpytest("-p", "no:cacheprovider", "-n", "0", "--mlir-target", "cuda", "-rs")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["*check.expect_almost_eq_const inside a region or a callee: the cuda target "
                                 "compares checks at the function's end only*"])
