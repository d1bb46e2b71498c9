"""Triage (issue 43) of compiles that fail outside one pass's error: a crash inside a pass
(an LLVM assertion, an abort, SIGFPE), the plugin's own Python steps, the translation to
LLVM IR, the import, and IREE's compiler. Each names ``failing_pass`` and hands over a
``reproduce.sh`` that, in a clean shell (the venv's bin alone on PATH), fails the same way:
the same first diagnostic, or the same signal."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_mlir_snippets.protocol import PROGRESS_ENV, Triage
from pytest_mlir_snippets.worker.core import SnippetFailure
from pytest_mlir_snippets.worker.triage.failingpass import begin, locate, marked, plugin_step

try:
    from test_iree import needs_iree
except ImportError:  # run from elsewhere
    needs_iree = pytest.mark.skip(reason="tests/test_iree.py not importable")

HOSTILE = Path(__file__).parent / "data" / "hostile"
BIN = str(Path(sys.executable).parent)
# a scalar i1 load: finalize-memref-to-llvm asserts ("integralElementType.getWidth() >= 8"),
# which the default pipeline's prepare_for_llvm step avoids and a user's pipeline does not
LOAD_I1 = """func.func @load_i1(%m: memref<4xi1>, %i: index) -> i1 {
  %0 = memref.load %m[%i] : memref<4xi1>
  return %0 : i1
}
"""
# arith is left for the translation to LLVM IR by a pipeline that lowers func alone
UNTRANSLATED = """func.func @twice(%a: f32) -> f32 {
  %0 = arith.addf %a, %a : f32
  return %0 : f32
}
"""
ADD_TENSORS = """func.func @add(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
MISTYPED = """func.func @mistyped(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<8xf32>
}
"""
PIPELINE = "builtin.module(finalize-memref-to-llvm, convert-func-to-llvm, reconcile-unrealized-casts)"


def clean_run(script: Path) -> subprocess.CompletedProcess[str]:
    """``script`` run as ``env -i PATH=<venv>/bin /bin/sh script`` from elsewhere."""
    return subprocess.run(["/bin/sh", str(script)], env={"PATH": BIN}, capture_output=True, text=True, cwd="/")


def first_error(text: str) -> str:
    """The message of the first ``error:`` line (an assertion's or LLVM ERROR's line else)."""
    for line in text.splitlines():
        if ": error: " in line:
            return line.split(": error: ", 1)[1].strip()
        if "Assertion" in line or line.startswith("LLVM ERROR"):
            return line.split("Assertion", 1)[-1].strip()
    return ""


def test_a_plugin_step_that_raises_is_named_with_the_ir_it_received() -> None:
    from mlir import ir, passmanager

    def broken(module: ir.Module) -> None:
        module.body.operations[0].erase()  # it changes the module, then fails
        raise ValueError("no pattern for this op")

    begin()
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(UNTRANSLATED)
        with pytest.raises(SnippetFailure) as caught:
            plugin_step("prepare_for_llvm", module, lambda: broken(module))
        tensors = ir.Module.parse(ADD_TENSORS)
        assert plugin_step("shlo.rewrite", tensors, lambda: 7) == 7
        found = locate(tensors.operation, "builtin.module(one-shot-bufferize)", passmanager.PassManager.parse)
    assert found is not None and found.after_step == "plugin:shlo.rewrite"  # the script starts after it
    failure = caught.value
    assert failure.triage is not None and failure.triage.failing_pass == "plugin:prepare_for_llvm"
    assert failure.message == "plugin:prepare_for_llvm failed: ValueError: no pattern for this op"
    assert "arith.addf" in failure.triage.before_pass_ir  # what it received, not what it left


def test_a_passing_compile_copies_nothing_and_a_failing_one_runs_again_to_name_its_pass(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_mlir_snippets.protocol import Compile, Options
    from pytest_mlir_snippets.worker import loop
    from pytest_mlir_snippets.worker.triage import failingpass

    asked: list[bool] = []  # what each step was told: copy what it receives, or not
    copying = failingpass.copying
    monkeypatch.setattr(failingpass, "copying", lambda: asked.append(copying()) or asked[-1])
    worker = loop.Worker("cpu")
    passed = worker.handle(Compile(ADD_TENSORS, "add", options=Options(skip_exec=True)))
    assert passed.ok and asked and not any(asked)
    asked.clear()
    failed = worker.handle(Compile(ADD_TENSORS, "add", options=Options(
        pipeline="builtin.module(canonicalize, one-shot-bufferize)", skip_exec=True)))
    assert asked == [False, True]  # run once without the copy, then again from the text with it
    assert failed.triage is not None and failed.triage.failing_pass == "one-shot-bufferize"
    assert failed.message == "lowering failed in one-shot-bufferize"
    assert "arith.addf %arg0, %arg0 : tensor<4xf32>" in failed.triage.before_pass_ir


def test_each_step_is_marked_while_it_runs_and_unmarked_after(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from mlir import ir, passmanager

    progress = tmp_path / "progress.json"
    monkeypatch.setenv(PROGRESS_ENV, str(progress))
    seen: list[str] = []

    def pass_manager(pipeline: str) -> passmanager.PassManager:
        seen.append(json.loads(progress.read_text())["failing_pass"])  # marked before the pass is made
        return passmanager.PassManager.parse(pipeline)

    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(UNTRANSLATED)
        assert locate(module.operation, "builtin.module(canonicalize, convert-func-to-llvm)", pass_manager) is None
        assert "llvm.func @twice" in str(module)  # lowered by the whole pipeline, a pass at a time
    assert seen == ["canonicalize", "convert-func-to-llvm"] and not progress.exists()
    with pytest.raises(RuntimeError), marked(Triage(failing_pass="x")):
        assert json.loads(progress.read_text()) == {"failing_pass": "x"}
        raise RuntimeError
    assert not progress.exists()  # an answered failure names no crash


@pytest.mark.slow
def test_crashes_and_errors_outside_a_pass_error_hand_over_reproducers(pytester: pytest.Pytester) -> None:
    """One run: SIGFPE and an LLVM fatal error in torch-mlir's passes (torch-dialect inputs),
    an LLVM assertion in an upstream pass, a translation failure, a snippet that does not verify."""
    for name in ("torch_view_zero.mlir", "onnx_castlike_ui16.mlir"):
        shutil.copy(HOSTILE / name, pytester.path / name)
    (pytester.path / "ops.mlir").write_text(LOAD_I1 + "\n" + UNTRANSLATED)
    (pytester.path / "bad.mlir").write_text(MISTYPED)
    out = pytester.path / "records.json"
    result = pytester.runpytest("-p", "no:cacheprovider", "--mlir-skip-exec", f"--mlir-json={out}",
                                f"--mlir-pipeline={PIPELINE}")
    result.stdout.fnmatch_lines(["*the sandbox worker killed by SIGFPE in convert-torch-to-linalg*"])
    records = {r["function"]: r for r in json.loads(out.read_text())["items"]}
    expected = {  # function: (failing pass, kind, signal of the reproducer's death)
        "view_zero": ("convert-torch-to-linalg", "crash", signal.SIGFPE),
        "castlike_ui16": ("convert-torch-onnx-to-torch", "crash", signal.SIGABRT),
        "load_i1": ("finalize-memref-to-llvm", "crash", signal.SIGABRT),
        "twice": ("translation", "compile-error", None),
        "mistyped": ("import", "compile-error", None),
    }
    assert {f: (r["failing_pass"], r["kind"]) for f, r in records.items()} == {
        f: e[:2] for f, e in expected.items()}
    worker_said = {"castlike_ui16": "Unhandled type in getScalarTypeForType: ui16",
                   "load_i1": "`integralElementType.getWidth() >= 8' failed."}
    for function, (_, _, died_by) in expected.items():
        record = records[function]
        script = pytester.path / record["reproducer"]
        done = clean_run(script)
        if died_by is not None:
            assert done.returncode == -died_by, (function, done.returncode, done.stderr[-2000:])
            if function in worker_said:
                assert worker_said[function] in done.stderr and worker_said[function] in record["output"]
        else:
            said = first_error("\n".join(record["diagnostics"]))
            assert said and done.returncode != 0 and first_error(done.stderr) == said, (function, done.stderr)
    tool = (pytester.path / records["view_zero"]["reproducer"]).read_text().splitlines()[-1].split()[1]
    assert tool.endswith("_mlir_libs/torch-mlir-opt")  # the executable itself: the script dies by its signal
    # sabotage: the same script on IR without the fault no longer fails
    script = pytester.path / records["load_i1"]["reproducer"]
    before = script.with_name("before-finalize-memref-to-llvm.mlir")
    before.write_text(before.read_text().replace("i1>", "i8>").replace("-> i1", "-> i8").replace(": i1", ": i8"))
    assert clean_run(script).returncode == 0


CHOLESKY = """func.func @chol(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = "stablehlo.cholesky"(%a) {lower = true} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
"""


@needs_iree
@pytest.mark.slow
def test_iree_compile_failures_name_irees_pass_and_reproduce_with_iree_compile(pytester: pytest.Pytester) -> None:
    """One run: a StableHLO op IREE has no pattern for, and a torch-dialect input that kills
    IREE's compiler with SIGFPE (in IREE's copy of torch-mlir's convert-torch-to-linalg)."""
    (pytester.path / "chol.mlir").write_text(CHOLESKY)
    shutil.copy(HOSTILE / "torch_view_zero.mlir", pytester.path / "view_zero.mlir")
    out = pytester.path / "records.json"
    result = pytester.runpytest("-p", "no:cacheprovider", "--mlir-skip-exec", "--mlir-target=iree-cpu",
                                f"--mlir-json={out}")
    result.stdout.fnmatch_lines(["*IREE's compiler failed in iree-stablehlo-to-iree-input*"])
    records = {r["function"]: r for r in json.loads(out.read_text())["items"]}
    crashed = records["view_zero"]
    assert (crashed["kind"], crashed["failing_pass"]) == ("crash", "convert-torch-to-linalg{allow-non-finites=true}")
    assert clean_run(pytester.path / crashed["reproducer"]).returncode == -signal.SIGFPE
    record = records["chol"]
    assert record["failing_pass"] == "iree-stablehlo-to-iree-input"  # from iree-compile's local reproducer
    script = pytester.path / record["reproducer"]
    assert "iree-compile input.mlir --iree-hal-target-device=local" in script.read_text()
    done = clean_run(script)
    said = first_error("\n".join(record["diagnostics"]))
    assert said.startswith("failed to legalize operation 'stablehlo.cholesky'")
    assert done.returncode != 0 and first_error(done.stderr) == said
    repro = "before-iree-stablehlo-to-iree-input.mlir"
    alone = subprocess.run([str(Path(BIN) / "iree-opt"), "--run-reproducer", repro], cwd=script.parent,
                           capture_output=True, text=True)
    assert alone.returncode != 0 and first_error(alone.stderr) == said  # that pass alone fails the same way
    (script.parent / "input.mlir").write_text(CHOLESKY.replace('"stablehlo.cholesky"(%a) {lower = true}',
                                                               '"stablehlo.abs"(%a)'))
    assert clean_run(script).returncode == 0  # sabotage: the script compiles what input.mlir holds


def test_a_script_after_a_plugin_step_names_it_and_a_plugin_step_gets_none(tmp_path: Path) -> None:
    from pytest_mlir_snippets.protocol import Kind, Response, Triage
    from pytest_mlir_snippets.triage import reproducer

    info = Triage(failing_pass="cse", before_pass_ir=ADD_TENSORS, failing_pipeline="builtin.module(cse)",
                  failing_tool="mlir-opt", after_step="plugin:prepare_for_llvm")
    script = reproducer.write(tmp_path / "a", Response(Kind.COMPILE_ERROR, "lowering failed in cse", triage=info),
                              "t")
    assert script is not None and "right after plugin:prepare_for_llvm, a Python step" in script.read_text()
    assert clean_run(script).returncode == 0  # cse does not fail: the script runs what it says
    step = Triage(failing_pass="plugin:onnx.expand", before_pass_ir=ADD_TENSORS)
    assert reproducer.write(tmp_path / "b", Response(Kind.COMPILE_ERROR, "plugin:onnx.expand failed", triage=step),
                            "t") is None
    assert (tmp_path / "b" / "before-plugin_onnx.expand.mlir").read_text() == ADD_TENSORS
    reproducer.remove(tmp_path / "b")  # the item passes again: its folder goes
    assert not (tmp_path / "b").exists()


def test_a_crash_is_run_again_only_when_time_is_left_for_it() -> None:
    from pytest_mlir_snippets.mlirtext.litscript import LitCommand
    from pytest_mlir_snippets.protocol import Compile, Kind, LitCompile, Response
    from pytest_mlir_snippets.triage import crashtriage

    request = Compile(HOSTILE.joinpath("torch_view_zero.mlir").read_text(), "view_zero")
    late = Response(Kind.CRASH, "the sandbox worker killed by SIGFPE", seconds=10.5)
    assert crashtriage.locate("cpu", None, request, late, timeout=10.0).message == late.message  # no time left
    lit = LitCompile(request.module, "view_zero", command=LitCommand(1, 1, "", "view_zero"))
    assert crashtriage.locate("cpu", None, lit, late, timeout=None).message == late.message
