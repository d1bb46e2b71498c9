"""The cuda target on any machine: snippets to PTX, the chip and PTX version, and
execute items that skip without a device."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import has_cuda_device

from pytest_mlir_snippets.worker.targets.base import SnippetFailure
from pytest_mlir_snippets.worker.targets.cuda import ptx_features

ROOT = Path(__file__).resolve().parent.parent


def test_ptx_version_follows_the_chip() -> None:
    assert [ptx_features(c) for c in ("sm_70", "sm_80", "sm_89", "sm_90a", "sm_100")] == [
        "+ptx60", "+ptx70", "+ptx78", "+ptx80", "+ptx86"]
    with pytest.raises(SnippetFailure, match="not a CUDA chip name"):
        ptx_features("ampere")


def test_snippets_compile_to_ptx_and_execute_needs_a_device(pytester: pytest.Pytester, run_items,
                                                            copy_into) -> None:
    for name in ("tosa.mlir", "tensor.mlir", "linalg.mlir", "failing.mlir"):
        copy_into(ROOT / "examples" / name)
    result, props = run_items("--mlir-target=cuda", "--mlir-cuda-chip=sm_90", "--mlir-save-artifacts", "-rs")
    compiles = {n: p for n, p in props.items() if n.endswith("[compile]")}
    assert compiles["tosa.mlir::matmul_0[compile]"]["outcome"] == "passed", result.stdout.str()[-3000:]
    assert compiles["tensor.mlir::concat_0[compile]"]["outcome"] == "passed"  # a copy becomes a kernel
    failed = {n for n, p in compiles.items() if p["outcome"] == "failure"}
    assert failed == {"failing.mlir::matmul_bad_shapes[compile]", "failing.mlir::cholesky_0[compile]"}
    result.stdout.fnmatch_lines(["*failing.mlir:12:8: error: failed to legalize operation 'stablehlo.cholesky'*"])
    ptx = (pytester.path / "ops_mlir_snippets" / "tosa.mlir" / "matmul_0" / "cuda" / "kernels.ptx").read_text()
    assert ".target sm_90" in ptx and ".version 8.0" in ptx and ".entry" in ptx
    if not has_cuda_device():  # a plain skip (kind skip), not unsupported
        executes = {n: p for n, p in props.items() if n.endswith("[execute]")}
        assert executes and all(p["outcome"] == "skipped" for p in executes.values())
        ran = {n: p["mlir_kind"] for n, p in executes.items() if not n.startswith("failing.mlir")}
        assert ran and set(ran.values()) == {"skip"}, ran
        result.stdout.fnmatch_lines(["*no CUDA device*"])


SEQUENTIAL = """func.func @cumsum(%a: tensor<8xf32>) -> tensor<8xf32> {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %r = scf.for %i = %c1 to %c8 step %c1 iter_args(%t = %a) -> tensor<8xf32> {
    %p = arith.subi %i, %c1 : index
    %x = tensor.extract %t[%p] : tensor<8xf32>
    %y = tensor.extract %t[%i] : tensor<8xf32>
    %s = arith.addf %x, %y : f32
    %n = tensor.insert %s into %t[%i] : tensor<8xf32>
    scf.yield %n : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
func.func @total(%a: tensor<8xf32>) -> tensor<f32> {
  %init = arith.constant dense<0.0> : tensor<f32>
  %r = linalg.reduce ins(%a : tensor<8xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
}
func.func @product_0d(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %0 = arith.mulf %a, %b : tensor<f32>
  return %0 : tensor<f32>
}
"""


def test_snippets_without_a_parallel_loop_become_single_thread_kernels() -> None:
    """scf.for only, a reduction to a 0-d result, 0-d arithmetic: no parallel loop to map,
    so the work runs as a kernel of one block of one thread (it made no gpu.binary). (No
    pytester here: its teardown would unload the MLIR modules this test imports.)"""
    from pytest_mlir_snippets.protocol import Options
    from pytest_mlir_snippets.worker.lowering import mlirtools
    from pytest_mlir_snippets.worker.optrun.iteration import launches
    from pytest_mlir_snippets.worker.targets.cuda import CudaBackend, default_pipeline

    backend = CudaBackend()
    for name in ("cumsum", "total", "product_0d"):
        compiled = backend.compile(SEQUENTIAL, name, Options(cuda_chip="sm_80", print_ir=True))
        assert compiled.info["single_thread"] and compiled.info["kernels"] == 4, name  # the module's three, a copy
        assert f".visible .entry {name}_kernel(" in compiled.info["ptx"]
    from mlir import ir, passmanager

    from pytest_mlir_snippets.worker.targets.cuda import BetweenParts

    pipeline = default_pipeline("sm_80")[:3]  # to outlined kernels, before NVVM
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(SEQUENTIAL)
        between = BetweenParts(pipeline)
        for i, part in enumerate(pipeline):
            if i:
                between(module)
            passmanager.PassManager.parse(part).run(module.operation)
        found = launches(module, ir)
        assert sorted(between.single_thread) == ["cumsum", "product_0d", "total"]
        single = [k for k in found if (k["grid"], k["block"]) == ([1, 1, 1], [1, 1, 1])]
        assert len(found) == 4 and len(single) == 3  # cumsum: its loop, then the copy of the result
        assert not mlirtools.ops_where(module, ir, lambda op: op.name in ("scf.for", "memref.load")
                                       and op.parent.name == "func.func")  # no work left in host code


def test_sequential_snippets_compile_on_cuda(pytester: pytest.Pytester, run_items) -> None:
    pytester.makefile(".mlir", ops=SEQUENTIAL)
    result, props = run_items("--mlir-target=cuda", "--mlir-skip-exec")
    assert {n: p["mlir_kind"] for n, p in props.items()} == {
        f"ops.mlir::{n}[compile]": "pass" for n in ("cumsum", "total", "product_0d")}, result.stdout.str()[-2000:]


ADD_CONSTANT = """func.func @add_constant(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = arith.addf %a, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def _double_backend(**kwargs: str) -> tuple[Any, Any]:
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "data" / "cuda_double"))
    try:
        from driver import RecordingDriver
    finally:
        sys.path.pop(0)
    from pytest_mlir_snippets.worker.targets.cuda import CudaBackend

    driver = RecordingDriver(**kwargs)
    return CudaBackend(driver=driver), driver


def test_host_code_runs_against_the_driver_interface() -> None:
    """Without a GPU: the JIT-compiled host code loads the PTX modules (once the device
    is open), launches every kernel with its grid and block, and allocates and frees
    managed memory only; the double runs no kernel, so the result differs from the cpu
    target's and says so."""
    from pytest_mlir_snippets.protocol import Options

    backend, driver = _double_backend()
    compiled = backend.compile(ADD_CONSTANT, "add_constant", Options())
    assert not driver.log  # nothing touches the device at compile time
    backend.open_device(0)
    with pytest.raises(SnippetFailure) as failed:
        backend.execute(compiled, Options(), None)
    assert failed.value.kind.value == "golden-mismatch"
    assert "differ from the plain lowering (cpu)" in failed.value.message
    loads = [e for e in driver.log if e[0] == "load"]
    assert loads and all(".entry add_constant_kernel" in driver.modules[h] for _, h in loads)
    launches = [e for e in driver.log if e[0] == "launch"]
    assert len(launches) == 2 and all(e[2] == (1, 1, 1) and e[3] == (16, 1, 1) for e in launches)
    assert {e[2] for e in driver.log if e[0] == "function"} == {"add_constant_kernel"}
    assert not driver.live  # inputs, the constant's copy, the result: all freed
    before = len(loads)
    with pytest.raises(SnippetFailure):
        backend.execute(compiled, Options(), None)  # a second run loads nothing again
    assert len([e for e in driver.log if e[0] == "load"]) == before


def test_a_driver_error_is_an_execute_error_and_resets_the_device() -> None:
    """A kernel fault leaves a CUDA context unusable: the worker resets the device and
    forgets what it compiled (its modules were loaded in the old context)."""
    from pytest_mlir_snippets.protocol import Options, Request
    from pytest_mlir_snippets.worker.loop import Worker

    backend, driver = _double_backend(fail_launch="CUDA_ERROR_ILLEGAL_ADDRESS")
    worker = Worker("cuda")
    worker._backend = backend
    assert worker.handle(Request("open", options=Options())).ok
    response = worker.handle(Request("execute", ADD_CONSTANT, "add_constant", Options()))
    assert response.kind.value == "execute-error", response.message
    assert "cuLaunchKernel failed with CUDA_ERROR_ILLEGAL_ADDRESS" in response.message
    assert ("reset",) in driver.log and not worker._compiled
    assert not driver.live
    driver.fail_launch = ""  # the next item compiles and loads again; nothing left over fails it
    response = worker.handle(Request("execute", ADD_CONSTANT, "add_constant", Options()))
    assert response.kind.value == "golden-mismatch", response.message  # the double runs no kernel


@pytest.mark.gpu
@pytest.mark.skipif(not has_cuda_device(), reason="no CUDA device")
def test_snippets_run_on_the_gpu(pytester: pytest.Pytester, run_items, copy_into) -> None:
    """Where a GPU exists: every snippet that compiles runs and matches the cpu target."""
    for name in ("tosa.mlir", "tensor.mlir", "linalg.mlir"):
        copy_into(ROOT / "examples" / name)
    result, props = run_items("--mlir-target=cuda")
    executes = {n: p for n, p in props.items() if n.endswith("[execute]")}
    compiled = {n.replace("[compile]", "[execute]") for n, p in props.items()
                if n.endswith("[compile]") and p["outcome"] == "passed"}
    assert compiled and {n for n in compiled if executes[n]["outcome"] != "passed"} == set(), \
        result.stdout.str()[-4000:]


def test_an_optimization_run_iteration_runs_against_the_driver_interface() -> None:
    from pytest_mlir_snippets.protocol import Options

    run = ROOT / "examples" / "runs" / "cuda_matmul"
    backend, driver = _double_backend()
    compiled = backend.compile_iteration((run / "model_linalg.mlir").read_text(), (run / "v0" / "transform.mlir")
                                         .read_text(), (run / "v0" / "pass_pipeline.txt").read_text(), "forward")
    backend.open_device(0)
    with pytest.raises(SnippetFailure, match="differ from the plain lowering"):  # no kernel ran
        backend.execute(compiled, Options(), None)
    launches = [e for e in driver.log if e[0] == "launch"]
    assert launches and all(e[3][0] * e[3][1] * e[3][2] > 1 for e in launches)  # v0 maps threads
    assert not driver.live


def test_a_failed_benchmark_resets_the_device_too() -> None:
    from pytest_mlir_snippets.protocol import Options, Request
    from pytest_mlir_snippets.worker.loop import Worker

    run = ROOT / "examples" / "runs" / "cuda_matmul"
    backend, driver = _double_backend(fail_launch="CUDA_ERROR_LAUNCH_FAILED")
    worker = Worker("cuda")
    worker._backend = backend
    assert worker.handle(Request("open", options=Options())).ok
    options = Options(bench_time=0.01, bench_warmup=1, bench_settle=0.1)
    response = worker.handle(Request("iteration-benchmark", (run / "model_linalg.mlir").read_text(), "forward",
                                     options, attachments={"schedule": (run / "v0" / "transform.mlir").read_text(),
                                                           "pipeline": (run / "v0" / "pass_pipeline.txt").read_text()}))
    assert response.kind.value == "execute-error" and "CUDA_ERROR_LAUNCH_FAILED" in response.message
    assert response.info["stage"] == "iteration-benchmark"
    assert ("reset",) in driver.log and not worker._compiled and not driver.live
