"""Triage (issue 43): a failed compile names the pass that failed, as written in its
pipeline, with the IR that pass was given; steps that are not passes are named too."""

from __future__ import annotations

import pytest

from pytest_mlir_snippets.worker.triage.failingpass import locate, steps

ADD = """func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def test_a_pipeline_is_its_passes_each_nested_in_its_anchors() -> None:
    pipeline = ('builtin.module(canonicalize{max-iterations=2 test-convergence}, func.func(cse, '
                'convert-linalg-to-loops), one-shot-bufferize{bufferize-function-boundaries}, '
                'gpu.module(strip-debuginfo))')
    assert steps(pipeline) == [
        ("canonicalize{max-iterations=2 test-convergence}",
         "builtin.module(canonicalize{max-iterations=2 test-convergence})"),
        ("cse", "builtin.module(func.func(cse))"),
        ("convert-linalg-to-loops", "builtin.module(func.func(convert-linalg-to-loops))"),
        ("one-shot-bufferize{bufferize-function-boundaries}",
         "builtin.module(one-shot-bufferize{bufferize-function-boundaries})"),
        ("strip-debuginfo", "builtin.module(gpu.module(strip-debuginfo))"),
    ]


def test_the_failing_pass_and_the_ir_it_was_given() -> None:
    from mlir import ir, passmanager

    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(ADD)
        found = locate(module.operation, "builtin.module(canonicalize, func.func(cse), one-shot-bufferize, cse)",
                       passmanager.PassManager.parse)
    assert found is not None
    failing, before = found.failing_pass, found.before_pass_ir
    assert found.failing_pipeline == "builtin.module(one-shot-bufferize)" and found.failing_tool == "mlir-opt"
    assert failing == "one-shot-bufferize"  # arith.addf on tensors: "op was not bufferized"
    assert "arith.addf %arg0, %arg0 : tensor<4xf32>" in before and "memref" not in before


@pytest.mark.slow
def test_a_compile_error_names_its_pass_and_hands_over_a_reproducer(pytester: pytest.Pytester) -> None:
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    (pytester.path / "ops.mlir").write_text(ADD)
    out = pytester.path / "records.json"
    result = pytester.runpytest("-p", "no:cacheprovider", "--mlir-skip-exec", f"--mlir-json={out}",
                                "--mlir-pipeline=builtin.module(canonicalize, one-shot-bufferize, cse)")
    result.stdout.fnmatch_lines(["*lowering failed in one-shot-bufferize*", "*ops.mlir:2:*op was not bufferized*",
                                 "*Captured reproducer*", "sh */reproduce.sh"])
    record = json.loads(out.read_text())["items"][0]
    assert record["failing_pass"] == "one-shot-bufferize"
    script = pytester.path / record["reproducer"]
    assert script.name == "reproduce.sh" and (script.parent / "before-one-shot-bufferize.mlir").is_file()
    clean = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/")}
    done = subprocess.run(["sh", str(script)], env=clean, capture_output=True, text=True, cwd="/")
    assert done.returncode != 0 and "error: op was not bufferized" in done.stderr  # the same first diagnostic
    pytester.runpytest("-p", "no:cacheprovider", "--mlir-skip-exec").assert_outcomes(passed=1)  # fixed
    assert not script.parent.exists()  # its reproducer went with the failure


def test_doctor_names_the_tools_folders_and_the_targets(pytester: pytest.Pytester) -> None:
    import sys
    from pathlib import Path

    result = pytester.run(str(Path(sys.executable).with_name("mlir-snippets")), "doctor")
    assert result.ret == 0
    out = result.stdout.str()
    opt = next(line.split()[1] for line in out.splitlines() if line.strip().startswith("mlir-opt "))
    assert Path(opt).is_file() and Path(opt).name == "mlir-opt"
    assert any(line.split() == ["cpu", "available"] for line in out.splitlines())
    assert f"export PATH={Path(opt).parent}:" in out
