"""``mlir-snippets import-torch`` and optimization run directories in collection."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

CLI = str(Path(sys.executable).with_name("mlir-snippets"))  # the venv's, PATH or not

MODEL = """
import torch

class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(32, 16)

    def forward(self, x):
        return torch.nn.functional.gelu(self.lin(x) + 1.0)

def make():
    torch.manual_seed(0)
    return MLP(), (torch.randn(8, 32),)
"""


@pytest.mark.slow
def test_import_torch_then_check_the_lowering_against_pytorch(pytester: pytest.Pytester, run_items) -> None:
    pytester.makepyfile(mlp=MODEL)
    result = pytester.run(CLI, "import-torch", "mlp.py:make", "run")
    assert result.ret == 0, result.stderr.str()
    assert "Warning" not in result.stderr.str()  # torch.export's deprecations are not the user's
    run = pytester.path / "run"
    assert sorted(p.name for p in run.iterdir()) == ["model_linalg.forward.npz", "model_linalg.mlir", "reference.py",
                                                      "reference_model.py", "reference_state.pt"]
    assert "func.func @forward(%arg0: tensor<8x32xf32>) -> tensor<8x16xf32>" in (run / "model_linalg.mlir").read_text()
    _, props = run_items("run/model_linalg.mlir")
    execute = props["model_linalg.mlir::forward[execute]"]
    assert execute["mlir_kind"] == "pass" and float(execute["mlir_max_abs_err"]) < 1e-5
    assert execute["mlir_reference"] == "recorded outputs (model_linalg.forward.npz)"
    assert "weights_only=True" in (run / "reference.py").read_text()  # tensors back, no pickled code run
    check = ("import sys, numpy; sys.path.insert(0, 'run'); import reference; m, i = reference.load(); "
             "numpy.save('again.npy', m(*i).detach().numpy())")
    subprocess.run([sys.executable, "-c", check], cwd=pytester.path, check=True, capture_output=True)
    with np.load(run / "model_linalg.forward.npz") as recorded:
        assert np.array_equal(np.load(pytester.path / "again.npy"), recorded["output_0"])


def test_import_torch_bad_target(pytester: pytest.Pytester) -> None:
    result = pytester.run(CLI, "import-torch", "no_colon_here", "out")
    assert result.ret == 2
    result.stderr.fnmatch_lines(["*expected MODULE:FACTORY, got 'no_colon_here'*"])


def test_import_torch_missing_source_is_one_line(pytester: pytest.Pytester) -> None:
    result = pytester.run(CLI, "import-torch", "nothere.py:make", "out")
    assert result.ret == 2
    assert result.stderr.lines == ["mlir-snippets import-torch: nothere.py: no such file"]
    assert not (pytester.path / "out").exists()


def test_files_of_an_optimization_run_are_not_snippets(pytester: pytest.Pytester) -> None:
    add = "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"
    run = pytester.mkdir("run")
    (run / "model_linalg.mlir").write_text(add)
    (run / "v0").mkdir()
    (run / "v0" / "gpu.mlir").write_text(add)
    (pytester.path / "ops.mlir").write_text(add)
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    assert [line for line in result.outlines if "::" in line] == [
        "ops.mlir::f[compile]", "ops.mlir::f[execute]",
        *(f"run/model_linalg.mlir::v0[{stage}]" for stage in ("contract", "compile", "correctness", "benchmark"))]
    named = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider", "run/v0/gpu.mlir")
    named.stdout.fnmatch_lines(["run/v0/gpu.mlir::f[[]compile[]]"])  # named on the command line: collected
