"""The cuda target on any machine: snippets to PTX, the chip and PTX version, and
execute items that skip without a device."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
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
        assert compiled.kept.single_thread and compiled.kept.kernel_count == 4, name  # the module's three, a copy
        assert f".visible .entry {name}_kernel(" in compiled.facts.ptx
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
        single = [k for k in found if (k.grid, k.block) == ([1, 1, 1], [1, 1, 1])]
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


DOUBLE = ROOT / "tests" / "data" / "cuda_double"


@pytest.fixture(scope="session")
def fake_libcuda(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The double of libcuda.so.1 (tests/data/cuda_double/libcuda.c), built once."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build the CUDA driver double")
    folder = tmp_path_factory.mktemp("cuda_double")
    subprocess.run([compiler, "-shared", "-fPIC", "-O1", "-Wl,-soname,libcuda.so.1", "-o",
                    str(folder / "libcuda.so.1"), str(DOUBLE / "libcuda.c")], check=True)
    return folder


@pytest.fixture
def double(fake_libcuda: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Sandbox workers started from here see a CUDA device: the double of
    cuda.bindings.driver first on their path, the double of libcuda.so.1 (which upstream's
    libmlir_cuda_runtime.so links) on their library path. Returns the double's log."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(DOUBLE), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("LD_LIBRARY_PATH", str(fake_libcuda))
    log = tmp_path / "cuda-double.log"
    monkeypatch.setenv("CUDA_DOUBLE_LOG", str(log))
    return log


def _log(path: Path) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines()] if path.exists() else []


def _records(pytester: pytest.Pytester) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in json.loads((pytester.path / "run.json").read_text())["items"]}


def test_host_code_runs_over_upstreams_runtime(pytester: pytest.Pytester, run_items, double: Path) -> None:
    """Without a GPU, against the double of the driver: cuda-python finds the device and
    its chip (sm_90: the PTX is made for it), the JIT-compiled host code loads the kernels'
    modules and launches them through upstream's libmlir_cuda_runtime.so, inputs and every
    buffer the host code allocates are managed memory, and everything is freed. The double
    runs no kernel, so the result differs from the cpu target's and says so."""
    pytester.makefile(".mlir", ops=ADD_CONSTANT)
    result, props = run_items("--mlir-target=cuda", "--mlir-json=run.json", "--mlir-save-artifacts")
    assert props["ops.mlir::add_constant[compile]"]["mlir_kind"] == "pass", result.stdout.str()[-3000:]
    execute = _records(pytester)["add_constant[execute]"]
    assert execute["kind"] == "golden-mismatch", execute
    assert "differ from the cpu target (plain lowering)" in execute["message"]
    assert execute["golden"] == "differential:cpu"
    ptx = (pytester.path / "ops_mlir_snippets" / "ops.mlir" / "add_constant" / "cuda" / "kernels.ptx").read_text()
    assert ".target sm_90" in ptx  # the device's chip, from cuda-python
    log = _log(double)
    loads = [e for e in log if e[0] == "load"]
    assert loads and all(e[2] == "add_constant_kernel" for e in loads)
    launches = [e for e in log if e[0] == "launch"]
    assert launches and all(e[2:8] == ["1", "1", "1", "16", "1", "1"] for e in launches), log
    allocated = [e[1] for e in log if e[0].startswith("alloc")]
    assert allocated and all(e[0] == "alloc_managed" for e in log if e[0].startswith("alloc"))
    assert sorted(allocated) == sorted(e[1] for e in log if e[0] == "free")  # all freed
    assert ["reset", "0"] not in log and log[-1] == ["release", "0"]


def test_a_kernel_fault_is_an_execute_error_and_resets_the_device(pytester: pytest.Pytester, run_items,
                                                                  double: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A failed launch fails its item with CUDA's name for it (upstream's wrapper printed it;
    the context's next synchronization returns it too); the worker resets the device
    (cuDevicePrimaryCtxReset), probes it, and the next item loads its modules again."""
    monkeypatch.setenv("CUDA_DOUBLE_FAIL", "cuLaunchKernel=CUDA_ERROR_ILLEGAL_ADDRESS")
    pytester.makefile(".mlir", ops=ADD_CONSTANT + ADD_CONSTANT.replace("add_constant", "add_again"))
    run_items("--mlir-target=cuda", "--mlir-json=run.json")
    records = _records(pytester)
    first, second = records["add_constant[execute]"], records["add_again[execute]"]
    assert first["kind"] == "execute-error", first
    assert "cuLaunchKernel failed with CUDA_ERROR_ILLEGAL_ADDRESS" in first["message"]
    assert second["kind"] == "golden-mismatch", second  # ran after the reset (the double runs no kernel)
    log = _log(double)
    reset = log.index(["reset", "0"])
    assert any(e[0] == "launch_failed" for e in log[:reset])
    assert any(e[0] == "load" and e[2] == "add_again_kernel" for e in log[reset:])
    assert any(e[0] == "launch" for e in log[reset:])


def test_no_device_is_a_skip(pytester: pytest.Pytester, run_items, double: Path,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_DOUBLE_DEVICES", "0")
    pytester.makefile(".mlir", ops=ADD_CONSTANT)
    _, props = run_items("--mlir-target=cuda", "--mlir-json=run.json", "-rs")
    execute = _records(pytester)["add_constant[execute]"]
    assert execute["kind"] == "skip" and execute["message"] == "no CUDA device: the driver reports no device"
    assert props["ops.mlir::add_constant[compile]"]["mlir_kind"] == "pass"
    assert not any(e[0] == "load" for e in _log(double))  # the runtime was never loaded


def test_an_optimization_run_iteration_runs_over_upstreams_runtime(pytester: pytest.Pytester, run_items,
                                                                   copy_into, double: Path) -> None:
    """v0 of the cuda example: its correctness runs (the double runs no kernel: a mismatch)
    with thread-mapped launches; its benchmark times the calls; all memory freed."""
    copy_into(ROOT / "examples" / "runs" / "cuda_matmul", "run")
    run_items("-k", "v0", "--mlir-json=run.json", "--mlir-bench-time=0.05", "--mlir-bench-settle=0.2")
    records = _records(pytester)
    assert records["v0[correctness]"]["kind"] == "golden-mismatch", records["v0[correctness]"]
    assert records["v0[benchmark]"]["kind"] == "pass", records["v0[benchmark]"]
    log = _log(double)
    launches = [e for e in log if e[0] == "launch"]
    assert launches and all(int(e[5]) * int(e[6]) * int(e[7]) > 1 for e in launches)  # v0 maps threads
    allocated = [e[1] for e in log if e[0].startswith("alloc")]
    assert sorted(allocated) == sorted(e[1] for e in log if e[0] == "free")


def test_gpu_check_stops_without_a_device(fake_libcuda: Path, tmp_path: Path) -> None:
    """``bash scripts/gpu_check.sh`` where the driver reports no device (the double, so
    that a GPU machine does not start the whole check here): one line, exit code 2,
    nothing written."""
    env = dict(os.environ, LD_LIBRARY_PATH=str(fake_libcuda), CUDA_DOUBLE_DEVICES="0", PYTHON=sys.executable,
               PYTHONPATH=os.pathsep.join(filter(None, [str(DOUBLE), os.environ.get("PYTHONPATH")])))
    done = subprocess.run(["bash", str(ROOT / "scripts" / "gpu_check.sh"), "--doc", str(tmp_path / "gpu.md")],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "no CUDA device (the driver reports no device)" in done.stdout
    assert not (tmp_path / "gpu.md").exists()


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


@pytest.mark.gpu
@pytest.mark.skipif(not has_cuda_device(), reason="no CUDA device")
def test_single_thread_kernels_run_on_the_gpu(pytester: pytest.Pytester, run_items) -> None:
    """Where a GPU exists: the snippets without a parallel loop run as one-thread kernels
    and match the cpu target."""
    pytester.makefile(".mlir", ops=SEQUENTIAL)
    result, props = run_items("--mlir-target=cuda")
    assert {n: p["mlir_kind"] for n, p in props.items()} == {
        f"ops.mlir::{n}[{s}]": "pass" for n in ("cumsum", "total", "product_0d") for s in ("compile", "execute")}, \
        result.stdout.str()[-4000:]
