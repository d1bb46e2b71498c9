"""The iree-cpu and iree-cuda targets with IREE's real compiler and runtime (the [iree]
extra): compiles in the worker, diagnostics at file lines, the ONNX routes, the
reference from a cpu child worker, reproducible artifacts, IREE's config JSON end to
end (and still valid for IREE's own runner), iree-cuda without a GPU, and the skip
without the extra."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import has_cuda_device

from pytest_mlir_snippets.protocol import (
    CloseDevice,
    Compile,
    Execute,
    OpenDevice,
    Options,
    Recorded,
    Request,
    Response,
)
from pytest_mlir_snippets.worker.targets.iree_compiler import input_type, type_spec
from pytest_mlir_snippets.worker.targets.iree_runtime import sort_run_flags

ROOT = Path(__file__).resolve().parent.parent
HAS_IREE = all(importlib.util.find_spec(name) is not None for name in ("iree.compiler", "iree.runtime"))
needs_iree = pytest.mark.skipif(not HAS_IREE, reason="the [iree] extra is not installed")
BIN = str(Path(sys.executable).parent)  # iree-compile, iree-opt, iree-run-module of the same wheels

ADD = """func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def test_input_types_are_detected_from_the_snippet() -> None:
    assert input_type(ADD) == "none"
    assert input_type("%0 = stablehlo.add %a, %b : tensor<4xf32>") == "stablehlo"
    assert input_type("%0 = tosa.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>") == "tosa"
    assert input_type("%0 = torch.aten.relu %a : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>") == "torch"
    assert input_type('%0 = torch.operator "onnx.Abs"(%arg0) : (!torch.vtensor<[3],f32>) -> '
                      '!torch.vtensor<[3],f32>') == "onnx"


def test_torch_value_tensors_are_fed_as_their_element_types() -> None:
    spec = type_spec("!torch.vtensor<[3,?,5],si64>", None)
    assert (spec.kind, spec.element, spec.shape) == ("tensor", "i64", (3, None, 5))
    assert type_spec("!torch.vtensor<[],ui8>", None).dtype == np.uint8


def test_run_module_flags_are_sorted_by_where_they_go() -> None:
    flags = sort_run_flags(["--device=local-sync", "--function=main", "--task_topology_group_count=1",
                            "--input=@x.npy"])
    assert flags.device == "local-sync"
    assert flags.runtime == ["--task_topology_group_count=1"]
    assert flags.ignored == ["--function=main", "--input=@x.npy"]


class SandboxWorker:
    """An iree-cpu sandbox worker, in its own process: IREE's compiler bindings cannot load
    in this one, which holds the upstream ``mlir`` bindings (see worker/judging/reference.py)."""

    def __init__(self) -> None:
        from pytest_mlir_snippets.client import Sandbox

        self.sandbox = Sandbox("iree-cpu")

    def handle(self, request: Request) -> Response:
        return self.sandbox.call(request, 120)


@pytest.fixture
def worker():
    made = SandboxWorker()
    assert made.handle(OpenDevice(options=Options(target="iree-cpu"))).ok
    yield made
    made.handle(CloseDevice(options=Options(target="iree-cpu")))
    made.sandbox.close()


@needs_iree
def test_a_snippet_compiles_in_the_worker_and_runs_against_the_cpu_target(worker) -> None:
    """No recorded outputs: the reference is the cpu target's plain lowering, from a cpu
    worker of the IREE worker's own (the two MLIR bindings cannot share a process)."""
    options = Options(target="iree-cpu")
    compiled = worker.handle(Compile(ADD, "add", options=options))
    assert compiled.ok, compiled.message
    assert compiled.facts is not None and compiled.facts.iree_route == "none input"
    executed = worker.handle(Execute(ADD, "add", options=options))
    assert executed.ok, executed.message
    assert executed.reference == "cpu target (plain lowering)" and executed.metrics["max_abs_err"] == 0.0
    assert executed.verdict is not None and executed.verdict.golden == "differential:cpu"
    a, b = np.arange(4, dtype=np.float32), np.ones(4, dtype=np.float32)
    wrong = worker.handle(Execute(ADD, "add", Recorded([a, b], [a]), options=options))
    assert wrong.kind.value == "golden-mismatch" and "recorded outputs" in wrong.message


@needs_iree
def test_failures_carry_irees_diagnostics_at_their_lines(worker) -> None:
    options = Options(target="iree-cpu")
    text = "func.func @chol(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {\n" \
           "  %0 = \"stablehlo.cholesky\"(%a) {lower = true} : (tensor<4x4xf32>) -> tensor<4x4xf32>\n" \
           "  return %0 : tensor<4x4xf32>\n}\n"
    response = worker.handle(Compile(text, "chol", options=options))
    assert response.kind.value == "compile-error"
    error = response.diagnostics[0]
    assert (error.severity, error.line, error.column) == ("error", 2, 8)
    assert "failed to legalize operation 'stablehlo.cholesky'" in error.message
    ttir = "func.func @t(%a: tensor<4xf32>) -> tensor<4xf32> {\n" \
           "  %0 = \"ttir.abs\"(%a) : (tensor<4xf32>) -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n"
    response = worker.handle(Compile(ttir, "t", options=options))
    assert response.kind.value == "unsupported"
    assert response.message.startswith("dialect 'ttir' is not available for target iree-cpu")


@needs_iree
def test_onnx_takes_the_torch_route_and_falls_back_to_irees_own(worker, corpus: Path) -> None:
    from pytest_mlir_snippets.golden.recorded import load_recorded

    options = Options(target="iree-cpu")
    routes = {}
    for name in ("test_abs", "test_center_crop_pad_crop_axes_chw_expanded"):
        path = corpus / "iree-onnx-ops" / name / "model.mlir"
        golden = load_recorded(path, name, 1)
        assert golden is not None
        compiled = worker.handle(Compile(path.read_text(), name, Recorded(golden.inputs), options=options))
        assert compiled.ok and compiled.facts is not None, compiled.message
        routes[name] = compiled.facts.iree_route
        executed = worker.handle(Execute(path.read_text(), name, golden, options=options))
        assert executed.ok and "run_module_io_flags.txt" in executed.reference, executed.message
    assert routes["test_abs"].startswith("onnx via torch-onnx-to-torch")
    assert routes["test_center_crop_pad_crop_axes_chw_expanded"] == "onnx input"  # the short route fails there


@needs_iree
@pytest.mark.slow
def test_examples_on_iree_cpu(pytester: pytest.Pytester, run_items, copy_into) -> None:
    for name in ("linalg.mlir", "tensor.mlir", "onnx.mlir", "stablehlo.mlir", "failing.mlir", "arith_math.mlir"):
        copy_into(ROOT / "examples" / name)
    # the functions the assertions name (a fixed sample: every example runs on cpu in test_run.py)
    result, props = run_items("--mlir-target=iree-cpu", "-rs", "-k",
                              "matmul_0 or onnx_add_relu or scalar_divmod or failing.mlir")
    executes = {n: p["outcome"] for n, p in props.items() if n.endswith("[execute]")}
    assert executes["linalg.mlir::matmul_0[execute]"] == "passed", result.stdout.str()[-3000:]
    assert executes["onnx.mlir::onnx_add_relu[execute]"] == "passed"  # the reference: cpu's torch-mlir lowering
    assert executes["arith_math.mlir::scalar_divmod[execute]"] == "passed"  # scalars in and out
    assert props["linalg.mlir::matmul_0[execute]"]["mlir_reference"] == "cpu target (plain lowering)"
    assert props["linalg.mlir::matmul_0[execute]"]["mlir_golden"] == "differential:cpu"
    result.stdout.fnmatch_lines(["*failing.mlir:12:8: error: failed to legalize operation 'stablehlo.cholesky'*",
                                 "*dialect 'ttir' is not available for target iree-cpu*"])


def iree_suite(corpus: Path, root: Path, tests: list[str]) -> Path:
    """The tests in iree-test-suites' layout with its cpu config; returns the config."""
    for name in tests:
        shutil.copytree(corpus / "iree-onnx-ops" / name, root / "onnx_ops" / "onnx" / "node" / "generated" / name)
    (root / "onnx_ops" / "configs").mkdir(parents=True)
    config = root / "onnx_ops" / "configs" / "cfg.json"
    shutil.copy(ROOT / "bench" / "iree_test_suites" / "onnx_ops_cpu_llvm_sync.json", config)
    return config


TESTS = ["test_abs", "test_add_bcast", "test_argmax_default_axis_example", "test_affine_grid_3d", "test_and4d",
         "test_mod_uint32", "test_dequantizelinear"]  # the last in the config's skip_compile_tests


@needs_iree
@pytest.mark.slow
def test_an_iree_config_is_updated_then_green_and_stays_valid_for_irees_runner(pytester: pytest.Pytester,
                                                                               corpus: Path) -> None:
    config = iree_suite(corpus, pytester.path, TESTS)
    first = pytester.runpytest("-p", "no:cacheprovider", "onnx_ops", "--mlir-target=iree-cpu",
                               f"--mlir-expectations={config}", "--mlir-update-expectations")
    written = json.loads(config.read_text())
    assert written["expected_compile_failures"] == ["onnx/node/generated/test_affine_grid_3d"], first.stdout.str()
    assert written["skip_compile_tests"][0] == "onnx/node/generated/test_dequantizelinear"  # kept
    second = pytester.runpytest("-p", "no:cacheprovider", "onnx_ops", "--mlir-target=iree-cpu",
                                f"--mlir-expectations={config}")
    assert second.ret == 0, second.stdout.str()[-3000:]
    second.assert_outcomes(passed=10, xfailed=1, skipped=3)  # affine_grid_3d's execute, dequantizelinear's two
    # IREE's own runner, on the same folder with the written config: green too
    suite = pytester.path / "onnx_ops"
    shutil.copy(ROOT / "bench" / "iree_test_suites" / "onnx_ops_conftest.py", suite / "conftest.py")
    shim = pytester.path / "shim"
    shim.mkdir()
    (shim / "pyjson5.py").write_text("import json\n\n\ndef load(f):\n    return json.load(f)\n")
    env = dict(os.environ, PATH=BIN + os.pathsep + os.environ.get("PATH", ""),
               PYTHONPATH=os.pathsep.join([str(shim), os.environ.get("PYTHONPATH", "")]))
    theirs = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:mlir_snippets", "-p", "no:cacheprovider",
                             "-q", f"--config-files={config}", "onnx"], cwd=suite, env=env, capture_output=True,
                            text=True)
    assert theirs.returncode == 0, theirs.stdout[-3000:]
    assert "5 passed, 1 xfailed" in theirs.stdout, theirs.stdout[-2000:]  # dequantizelinear: not collected


@needs_iree
@pytest.mark.slow
def test_saved_artifacts_reproduce_the_item_outside_pytest(pytester: pytest.Pytester, corpus: Path) -> None:
    config = iree_suite(corpus, pytester.path, ["test_abs"])
    result = pytester.runpytest("-p", "no:cacheprovider", "onnx_ops", "--mlir-target=iree-cpu",
                                f"--mlir-expectations={config}", "--mlir-save-artifacts")
    result.assert_outcomes(passed=2)
    folder = pytester.path.joinpath("ops_mlir_snippets", "onnx_ops", "onnx", "node", "generated", "test_abs",
                                    "model.mlir", "test_abs", "iree-cpu")
    names = {p.name for p in folder.iterdir()}
    assert {"snippet.mlir", "model.vmfb", "iree-compile.sh", "iree-run-module.sh", "input_0.npy",
            "expected_output_0.bin"} <= names
    assert "--device=local-sync" in (folder / "iree-run-module.sh").read_text()
    env = dict(os.environ, PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    (folder / "model.vmfb").unlink()
    compiled = subprocess.run(["sh", str(folder / "iree-compile.sh")], env=env, capture_output=True, text=True)
    assert compiled.returncode == 0 and (folder / "model.vmfb").exists(), compiled.stderr[-2000:]
    ran = subprocess.run(["sh", str(folder / "iree-run-module.sh")], env=env, capture_output=True, text=True)
    assert ran.returncode == 0 and "[SUCCESS]" in ran.stdout, ran.stdout[-2000:] + ran.stderr[-2000:]


@needs_iree
@pytest.mark.slow
def test_iree_cuda_compiles_anywhere_and_executes_where_a_device_is(pytester: pytest.Pytester, run_items,
                                                                    copy_into, corpus: Path) -> None:
    for name in ("linalg.mlir", "tosa.mlir", "stablehlo.mlir"):
        copy_into(ROOT / "examples" / name)
    copy_into(corpus / "tt-mlir-snippets" / "stablehlo", "tt_stablehlo")
    result, props = run_items("--mlir-target=iree-cuda", "--mlir-cuda-chip=sm_86", "--mlir-save-artifacts", "-rs")
    compiles = {n: p["outcome"] for n, p in props.items() if n.endswith("[compile]")}
    failed = sorted(n for n, o in compiles.items() if o != "passed")
    assert len(compiles) > 30 and len(failed) <= 3, failed
    vmfbs = list((pytester.path / "ops_mlir_snippets").rglob("model.vmfb"))
    assert len(vmfbs) == len(compiles) - len(failed)
    assert "--iree-cuda-target=sm_86" in next(pytester.path.rglob("iree-compile.sh")).read_text()
    if not has_cuda_device():
        executes = [p for n, p in props.items() if n.endswith("[execute]")]
        assert executes and all(p["outcome"] == "skipped" for p in executes)
        result.stdout.fnmatch_lines(["*no CUDA device*"])


def test_without_the_extra_iree_items_skip_naming_it(pytester: pytest.Pytester, copy_into,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A regular ``iree`` package first on the path hides the wheels' namespace package."""
    shim = pytester.path / "no_iree"
    (shim / "iree").mkdir(parents=True)
    (shim / "iree" / "__init__.py").write_text("")
    copy_into(ROOT / "examples" / "linalg.mlir")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(shim), os.environ.get("PYTHONPATH", "")]))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "linalg.mlir", "--mlir-target=iree-cpu", "-rs")
    outcomes = result.parseoutcomes()
    assert outcomes.get("skipped", 0) > 0 and "passed" not in outcomes and "failed" not in outcomes
    result.stdout.fnmatch_lines(["*IREE is not installed*install pytest-mlir-snippets[[]iree[]]*"])


def test_a_config_that_names_its_device_is_taken_verbatim() -> None:
    """iree-test-suites' configs give the whole compile command (IREE's runner adds nothing:
    generic CPU, IREE's own input route); other flags (a CMake suite's COMPILER_FLAGS) join
    the target's."""
    from pytest_mlir_snippets.worker.targets.iree import IreeCpuBackend

    backend = IreeCpuBackend()
    config = ["--iree-hal-target-backends=llvm-cpu", "--iree-input-demote-f64-to-f32=false"]
    assert backend.flags(Options(target="iree-cpu", iree_compile_flags=config)) == config
    assert backend.verbatim(Options(iree_compile_flags=config))
    suite = ["--iree-llvmcpu-target-cpu=generic"]
    flags = backend.flags(Options(target="iree-cpu", iree_compile_flags=suite))
    assert "--iree-hal-local-target-device-backends=llvm-cpu" in flags and flags[-1] == suite[0]
    assert "--iree-llvmcpu-target-cpu=host" not in flags and not backend.verbatim(Options(iree_compile_flags=suite))
    assert "--iree-llvmcpu-target-cpu=host" in backend.flags(Options(target="iree-cpu"))
