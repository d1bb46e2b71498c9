"""StableHLO as JAX writes it, and the lowering corners it reaches: 0-d i1, memrefs
that manage their own buffers, the ``check`` convention as a golden."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

ZERO_D_I1 = """func.func @compare_0d(%a: tensor<f32>, %b: tensor<f32>) -> tensor<i1> {
  %0 = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %0 : tensor<i1>
}
func.func @select_on_0d(%p: tensor<i1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.negate %a : tensor<4xf32>
  %1 = stablehlo.select %p, %a, %0 : tensor<i1>, tensor<4xf32>
  return %1 : tensor<4xf32>
}
"""
ZERO_D_I1_UPSTREAM = """func.func @extract_0d(%p: tensor<i1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  %c = tensor.extract %p[] : tensor<i1>
  %n = arith.negf %a : tensor<4xf32>
  %r = arith.select %c, %a, %n : tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func @compare_0d_linalg(%a: tensor<f32>, %b: tensor<f32>) -> tensor<i1> {
  %e = tensor.empty() : tensor<i1>
  %r = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>],
                       iterator_types = []} ins(%a, %b : tensor<f32>, tensor<f32>) outs(%e : tensor<i1>) {
  ^bb0(%x: f32, %y: f32, %o: i1):
    %c = arith.cmpf ogt, %x, %y : f32
    linalg.yield %c : i1
  } -> tensor<i1>
  return %r : tensor<i1>
}
func.func @not_0d_memref(%m: memref<i1>) {
  %v = memref.load %m[] : memref<i1>
  %t = arith.constant true
  %n = arith.xori %v, %t : i1
  memref.store %n, %m[] : memref<i1>
  return
}
"""


def kinds(props: dict[str, dict[str, str]]) -> dict[str, str]:
    return {node: p.get("mlir_kind", p["outcome"]) for node, p in props.items()}


def test_zero_d_i1_compiles_and_matches(pytester: pytest.Pytester, run_items) -> None:
    pytester.makefile(".mlir", shlo=ZERO_D_I1, upstream=ZERO_D_I1_UPSTREAM)
    _, props = run_items()
    own = "upstream.mlir::not_0d_memref[execute]"
    assert set(k for node, k in kinds(props).items() if node != own) == {"pass"}, kinds(props)
    assert len(props) == 10
    assert props["shlo.mlir::compare_0d[execute]"]["mlir_reference"] == "StableHLO reference interpreter"
    # a function that writes a buffer: IREE takes tensors only, so only the plugin's own lowering
    # agrees with it, which is no independent golden (a skip); the numbers are checked below
    assert (props[own]["mlir_golden"], props[own]["outcome"]) == ("self", "skipped")


def test_zero_d_i1_memref_is_read_and_written() -> None:
    """The rewrite itself, checked against numbers (the plain lowering shares it)."""
    import numpy as np

    from pytest_mlir_snippets.protocol import Options
    from pytest_mlir_snippets.worker.targets.cpu import CpuBackend

    backend = CpuBackend()
    compiled = backend.compile(ZERO_D_I1_UPSTREAM, "not_0d_memref", Options())
    for value in (True, False):
        (out,) = backend._run(compiled, [np.array(value)])
        assert out.shape == () and bool(out) is (not value)
    compiled = backend.compile(ZERO_D_I1_UPSTREAM, "compare_0d_linalg", Options())
    (out,) = backend._run(compiled, [np.array(2.0, np.float32), np.array(1.0, np.float32)])
    assert out.dtype == np.bool_ and bool(out)


OWN_BUFFERS = """func.func @own_buffers(%a: memref<4xf32>, %out: memref<4xf32>) {
  %tmp = memref.alloc() : memref<4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %tmp[%i] : memref<4xf32>
  }
  %big = memref.realloc %tmp : memref<4xf32> to memref<8xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %y = memref.load %big[%i] : memref<8xf32>
    %z = arith.addf %y, %y : f32
    memref.store %z, %out[%i] : memref<4xf32>
  }
  memref.dealloc %big : memref<8xf32>
  return
}
func.func @with_tensors(%a: tensor<4xf32>) -> tensor<4xf32> {
  %tmp = memref.alloc() : memref<4xf32>
  %c0 = arith.constant 0 : index
  %x = tensor.extract %a[%c0] : tensor<4xf32>
  memref.store %x, %tmp[%c0] : memref<4xf32>
  %y = memref.load %tmp[%c0] : memref<4xf32>
  memref.dealloc %tmp : memref<4xf32>
  %s = tensor.splat %y : tensor<4xf32>
  %0 = arith.addf %a, %s : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def test_snippet_that_frees_its_own_buffers(pytester: pytest.Pytester, run_items) -> None:
    import numpy as np

    from pytest_mlir_snippets.protocol import Options
    from pytest_mlir_snippets.worker.targets.cpu import CpuBackend

    pytester.makefile(".mlir", own=OWN_BUFFERS)
    _, props = run_items()
    compiles = {node: k for node, k in kinds(props).items() if node.endswith("[compile]")}
    assert set(compiles.values()) == {"pass"} and len(props) == 4, kinds(props)
    # IREE takes neither (memrefs, frees): the plugin's own lowering only, no independent
    # golden (skips); the numbers are checked here instead
    assert {p["mlir_golden"] for node, p in props.items() if node.endswith("[execute]")} == {"self"}
    backend = CpuBackend()
    a = np.array([1, -2, 3, 0.5], np.float32)
    _, out = backend._run(backend.compile(OWN_BUFFERS, "own_buffers", Options()), [a, np.zeros(4, np.float32)])
    assert np.array_equal(out, 2 * a * a)
    (out,) = backend._run(backend.compile(OWN_BUFFERS, "with_tensors", Options()), [a])
    assert np.array_equal(out, a + a[0])


# openxla's testdata conventions: @main() without arguments, inputs and expected values as
# constants, the checks inside; the expected values here are what the StableHLO spec says
CHECKED = """module @jit_main {
  func.func public @main() -> (tensor<3xi32> {jax.result_info = ""}) {
    %a = stablehlo.constant dense<[1, -2, 3]> : tensor<3xi32>
    %0 = stablehlo.abs %a : tensor<3xi32>
    %e = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
    stablehlo.custom_call @check.expect_eq(%0, %e) {has_side_effect = true} : (tensor<3xi32>, tensor<3xi32>) -> ()
    %f = stablehlo.constant dense<[0.5, 2.0, 0x7FC00000]> : tensor<3xf32>
    %1 = stablehlo.sqrt %f : tensor<3xf32>
    %g = stablehlo.constant dense<[0.707106769, 1.41421354, 0x7FC00000]> : tensor<3xf32>
    stablehlo.custom_call @check.expect_close(%1, %g) {has_side_effect = true} : (tensor<3xf32>, tensor<3xf32>) -> ()
    %h = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf64>
    %2 = stablehlo.exponential %h : tensor<2xf64>
    %k = stablehlo.constant dense<[2.7181, 7.3895]> : tensor<2xf64>
    stablehlo.custom_call @check.expect_almost_eq(%2, %k) {has_side_effect = true}
      : (tensor<2xf64>, tensor<2xf64>) -> ()
    %b = stablehlo.constant dense<[1.5, -2.25]> : tensor<2xbf16>
    %3 = stablehlo.multiply %b, %b : tensor<2xbf16>
    %m = stablehlo.constant dense<[2.25, 5.0625]> : tensor<2xbf16>
    %ok = stablehlo.custom_call @check.eq(%m, %3) : (tensor<2xbf16>, tensor<2xbf16>) -> tensor<i1>
    %c = stablehlo.constant dense<[(1.0, 2.0), (0.0, -1.0)]> : tensor<2xcomplex<f32>>
    %4 = stablehlo.multiply %c, %c : tensor<2xcomplex<f32>>
    %n = stablehlo.constant dense<[(-3.0, 4.0), (-1.0, 0.0)]> : tensor<2xcomplex<f32>>
    stablehlo.custom_call @check.expect_close(%4, %n) {has_side_effect = true}
      : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> ()
    return %0 : tensor<3xi32>
  }
}
"""
CHECKED_CONST = """module {
  func.func @add_si4() {
    %c = stablehlo.constant dense<[0, 1, 2, -3, 0]> : tensor<5xi4>
    %c_0 = stablehlo.constant dense<[-8, -1, 2, -3, 7]> : tensor<5xi4>
    %0 = stablehlo.add %c, %c_0 : tensor<5xi4>
    "check.expect_eq_const"(%0) <{value = dense<[-8, 0, 4, -6, 7]> : tensor<5xi4>}> : (tensor<5xi4>) -> ()
    return
  }
}

// -----

module {
  func.func @add_ui2() {
    %c = stablehlo.constant dense<[0, 2]> : tensor<2xui2>
    %c_0 = stablehlo.constant dense<1> : tensor<2xui2>
    %0 = stablehlo.add %c, %c_0 : tensor<2xui2>
    "check.expect_eq_const"(%0) <{value = dense<[1, 3]> : tensor<2xui2>}> : (tensor<2xui2>) -> ()
    return
  }
}

// -----

module {
  func.func @add_bool() {
    %c = stablehlo.constant dense<[false, false, true, true]> : tensor<4xi1>
    %c_0 = stablehlo.constant dense<[false, true, false, true]> : tensor<4xi1>
    %0 = stablehlo.add %c, %c_0 : tensor<4xi1>
    "check.expect_eq_const"(%0) <{value = dense<[false, true, true, true]> : tensor<4xi1>}> : (tensor<4xi1>) -> ()
    return
  }
}

// -----

module {
  func.func @add_c128() {
    %c = stablehlo.constant dense<[(1.5, 2.5), (7.5, 5.5)]> : tensor<2xcomplex<f64>>
    %0 = stablehlo.add %c, %c : tensor<2xcomplex<f64>>
    "check.expect_almost_eq_const"(%0) <{value = dense<[(3.0, 5.0), (15.0, 11.00001)]> : tensor<2xcomplex<f64>>,
                                         tolerance = 1.0e-4 : f64}> : (tensor<2xcomplex<f64>>) -> ()
    return
  }
}
"""


def test_checks_are_the_golden(pytester: pytest.Pytester, run_items) -> None:
    pytester.makefile(".mlir", testdata=CHECKED, quantized=CHECKED_CONST)
    _, props = run_items()
    assert set(kinds(props).values()) == {"pass"} and len(props) == 10, kinds(props)
    main = props["testdata.mlir::main[execute]"]
    assert main["mlir_reference"] == ("the snippet's 5 check(s) (check.eq, check.expect_almost_eq, check.expect_close,"
                                      " check.expect_eq)")
    assert float(main["mlir_check_0_max_abs_err"]) == 0.0 and float(main["mlir_check_1_max_ulp"]) <= 3
    assert float(main["mlir_check_2_max_abs_err"]) < 1e-3  # within expect_almost_eq's 1e-3
    assert props["quantized.mlir::add_c128[execute]"]["mlir_check_0_mismatches"] == "0.0"


def test_a_failed_check_names_itself_and_its_line(pytester: pytest.Pytester, run_items) -> None:
    wrong = CHECKED.replace("dense<[1, 2, 3]> : tensor<3xi32>", "dense<[1, 2, 4]> : tensor<3xi32>").replace(
        "dense<[2.7181, 7.3895]>", "dense<[2.7181, 7.3875]>")
    pytester.makefile(".mlir", testdata=wrong)
    result, props = run_items()
    assert kinds(props) == {"testdata.mlir::main[compile]": "pass", "testdata.mlir::main[execute]": "golden-mismatch"}
    out = result.stdout.str()
    assert "2 of 5 check(s) failed" in out
    path = pytester.path / "testdata.mlir"
    assert (f"{path}:6:5: error: check.expect_eq failed: 1 of 3 element(s) not equal; first at index [2]: "
            "3 (actual) vs 4 (expected)") in out
    assert f"{path}:14:5: error: check.expect_almost_eq failed: 1 of 2 element(s) not within tolerance 0.001" in out
    assert "check_0_mismatches=1" in out and "check_2_mismatches=1" in out


SIGNS = """func.func @sign_bf16(%x: tensor<5xbf16>) -> tensor<5xbf16> {
  %0 = stablehlo.sign %x : tensor<5xbf16>
  return %0 : tensor<5xbf16>
}
func.func @sign_f16(%x: tensor<5xf16>) -> tensor<5xf16> {
  %0 = stablehlo.sign %x : tensor<5xf16>
  return %0 : tensor<5xf16>
}
func.func @rsqrt_complex(%x: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %0 = stablehlo.rsqrt %x : tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}
func.func @complex_in_and_out(%x: tensor<2x3xcomplex<f64>>, %y: tensor<2x3xcomplex<f64>>)
    -> (tensor<2x3xcomplex<f64>>, tensor<2x3xf64>) {
  %0 = stablehlo.multiply %x, %y : tensor<2x3xcomplex<f64>>
  %1 = stablehlo.abs %x : (tensor<2x3xcomplex<f64>>) -> tensor<2x3xf64>
  return %0, %1 : tensor<2x3xcomplex<f64>>, tensor<2x3xf64>
}
"""
COPYSIGN = """func.func @copysign(%a: f16, %b: f16, %c: bf16, %d: bf16, %e: f32, %f: f64) -> (f16, bf16, f32, f64) {
  %0 = math.copysign %a, %b : f16
  %1 = math.copysign %c, %d : bf16
  %d2 = arith.constant -0.0 : f32
  %2 = math.copysign %e, %d2 : f32
  %3 = math.copysign %f, %f : f64
  return %0, %1, %2, %3 : f16, bf16, f32, f64
}
"""


def test_copysign_of_every_float_type(pytester: pytest.Pytester, run_items) -> None:
    """math.copysign, which stablehlo.sign on f16/bf16 and complex math make, lowered as bits;
    complex arguments and results, which the interpreter takes and gives as parts."""
    import ml_dtypes
    import numpy as np

    from pytest_mlir_snippets.protocol import Options
    from pytest_mlir_snippets.worker.targets.cpu import CpuBackend

    pytester.makefile(".mlir", signs=SIGNS)
    _, props = run_items()
    assert set(kinds(props).values()) == {"pass"} and len(props) == 8, kinds(props)
    assert props["signs.mlir::complex_in_and_out[execute]"]["mlir_reference"] == "StableHLO reference interpreter"
    backend = CpuBackend()
    compiled = backend.compile(COPYSIGN, "copysign", Options())
    values = [np.array(v, t) for v, t in [(1.5, np.float16), (-2.0, np.float16), (-3.25, ml_dtypes.bfloat16),
                                          (0.5, ml_dtypes.bfloat16), (7.0, np.float32), (-4.0, np.float64)]]
    out = backend._run(compiled, values)
    assert [float(v) for v in out] == [-1.5, 3.25, -7.0, -4.0]


POPCNT = """func.func @popcnt(%a: tensor<7xi32>, %b: tensor<3x2xui8>, %c: tensor<i64>)
    -> (tensor<7xi32>, tensor<3x2xui8>, tensor<i64>) {
  %0 = stablehlo.popcnt %a : tensor<7xi32>
  %1 = stablehlo.popcnt %b : tensor<3x2xui8>
  %2 = stablehlo.popcnt %c : tensor<i64>
  return %0, %1, %2 : tensor<7xi32>, tensor<3x2xui8>, tensor<i64>
}
"""


def test_popcnt(pytester: pytest.Pytester, run_items) -> None:
    """math.ctpop as LLVM's intrinsic (convert-math-to-libm rejects it), against the interpreter."""
    pytester.makefile(".mlir", popcnt=POPCNT)
    _, props = run_items()
    assert set(kinds(props).values()) == {"pass"} and len(props) == 2, kinds(props)


DYNAMIC_PARTS = """func.func @dynamic_parts(%x: tensor<?x3xcomplex<f32>>, %y: tensor<?x3xbf16>)
    -> (tensor<3xf32>, tensor<3xbf16>) {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %w = stablehlo.constant dense<0.0> : tensor<bf16>
  %r = stablehlo.real %x : (tensor<?x3xcomplex<f32>>) -> tensor<?x3xf32>
  %0 = stablehlo.reduce(%r init: %z) applies stablehlo.add across dimensions = [0]
      : (tensor<?x3xf32>, tensor<f32>) -> tensor<3xf32>
  %1 = stablehlo.reduce(%y init: %w) applies stablehlo.add across dimensions = [0]
      : (tensor<?x3xbf16>, tensor<bf16>) -> tensor<3xbf16>
  return %0, %1 : tensor<3xf32>, tensor<3xbf16>
}
"""


def test_dynamic_complex_and_bf16_arguments_reach_the_interpreter(pytester: pytest.Pytester, run_items) -> None:
    pytester.makefile(".mlir", dynamic=DYNAMIC_PARTS)
    _, props = run_items()
    assert set(kinds(props).values()) == {"pass"} and len(props) == 2, kinds(props)
    assert props["dynamic.mlir::dynamic_parts[execute]"]["mlir_reference"] == "StableHLO reference interpreter"


CALLS = """module {
  func.func @main() -> tensor<4xf32> {
    %x = stablehlo.constant dense<[1.0, -2.0, 3.0, 0.5]> : tensor<4xf32>
    %0 = call @running_max(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %e = stablehlo.constant dense<[1.0, 1.0, 3.0, 3.0]> : tensor<4xf32>
    %ok = stablehlo.custom_call @check.eq(%e, %0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<i1>
    return %0 : tensor<4xf32>
  }
  func.func private @running_max(%x: tensor<4xf32>) -> tensor<4xf32> {
    %low = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = "stablehlo.reduce_window"(%x, %low) <{padding = dense<[[3, 0]]> : tensor<1x2xi64>,
                                               window_dimensions = array<i64: 4>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %m = func.call @larger(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      stablehlo.return %m : tensor<f32>
    }) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  func.func private @larger(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.maximum %a, %b : tensor<f32>
    return %0 : tensor<f32>
  }
}
"""


def test_callees_are_inlined_and_an_unused_check_eq_is_kept(pytester: pytest.Pytester, run_items) -> None:
    """A call in a reduce_window body does not legalize: callees are inlined first, without
    the inliner's canonicalization (it dropped the unused, side-effect free check.eq)."""
    pytester.makefile(".mlir", calls=CALLS)
    _, props = run_items()
    assert set(kinds(props).values()) == {"pass"} and len(props) == 2, kinds(props)
    assert props["calls.mlir::main[execute]"]["mlir_reference"] == "the snippet's 1 check(s) (check.eq)"
    pytester.makefile(".mlir", calls=CALLS.replace("[1.0, 1.0, 3.0, 3.0]", "[1.0, 1.0, 3.0, 4.0]"))
    _, props = run_items()
    assert props["calls.mlir::main[execute]"]["mlir_kind"] == "golden-mismatch"


# the interpreter's own expected outcome for 0/0 in i8 quantization differs from this lowering's
IMPLEMENTATION_DEFINED = {"quantized/div_singularity_0_by_0_lhs_float32_2__rhs_float32_2_qi8.mlir"}
# dynamic/ (no checks: the interpreter is the golden) has no RUN-DISABLED line; these do not pass
DYNAMIC_NOT_PASSING = {
    "dynamic/conv_general_dilated_1d_stride_2_even_dynamic.mlir",  # two window strides for one spatial dimension
    "dynamic/dynamlic_slice_t2.mlir",  # slice bounds computed from an input: no static shape
}


@pytest.mark.slow
def test_openxla_testdata(pytester: pytest.Pytester, run_items, copy_into, corpus: Path) -> None:
    """openxla's testdata, every ninth file (the whole corpus is scripts/conformance.py's):
    every self-checking file passes but those openxla does not run either (RUN-DISABLED)
    and one implementation-defined quantized 0/0; dynamic/ (JAX's shape-polymorphic
    exports, refined to --mlir-dynamic-dim) against the interpreter."""
    source = corpus / "stablehlo-testdata"
    target = copy_into(source, "testdata")
    for number, path in enumerate(sorted(target.rglob("*.mlir"))):
        if number % 9:
            path.unlink()
    run_items("testdata", "-n", "0", "--mlir-json=run.json", subprocess=True)
    items = json.loads((pytester.path / "run.json").read_text())["items"]
    # folded, or nothing computed (a JAX export of an identity, device_put: the input checked as given)
    folded = {item["file"] for item in items if item.get("computed") in ("compile-time", "nothing")
              and item["kind"] == "skip"}
    failed = {item["file"].removeprefix("testdata/") for item in items if item["kind"] != "pass"
              and item["file"] not in folded}
    executes = [item for item in items if item["stage"] == "execute" and item.get("golden") not in (None, "none")]
    runtime = [item for item in executes if item.get("computed") == "runtime"]
    assert len(runtime) >= 0.95 * len(executes), (len(runtime), len(executes), sorted(folded))
    disabled = {str(p.relative_to(source)) for p in source.rglob("*.mlir")
                if "RUN-DISABLED" in p.read_text().split("\n", 1)[0]}
    assert failed - disabled - IMPLEMENTATION_DEFINED - DYNAMIC_NOT_PASSING == set()
    assert len({item["file"] for item in items}) == sum(1 for _ in target.rglob("*.mlir")) > 100
    checked = [item for item in items if item["stage"] == "execute" and item["kind"] == "pass"]
    dynamic = [item for item in checked if item["file"].startswith("testdata/dynamic/")]
    assert all(item["reference"].startswith("the snippet's") for item in checked if item not in dynamic)
    references = Counter(item["reference"] for item in dynamic)
    assert references["StableHLO reference interpreter"] > 12 and len(dynamic) > 12, references
