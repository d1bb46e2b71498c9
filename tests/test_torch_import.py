"""``mlir-snippets import-torch`` and optimization run directories in collection."""

from __future__ import annotations

import os
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


TUPLE_AND_FFT = """
import torch

class Spectrum(torch.nn.Module):
    def forward(self, x):
        return torch.fft.rfft(x).abs()

def lstm():
    torch.manual_seed(0)
    return torch.nn.LSTM(4, 8, batch_first=True), (torch.randn(2, 3, 4),)

def spectrum():
    return Spectrum(), (torch.randn(4, 16),)
"""


@pytest.mark.slow
def test_import_torch_flattens_tuple_outputs(pytester: pytest.Pytester) -> None:
    """nn.LSTM returns (output, (h, c)): three recorded outputs, in the function's order."""
    pytester.makepyfile(models=TUPLE_AND_FFT)
    result = pytester.run(CLI, "import-torch", "models.py:lstm", "run")
    assert result.ret == 0, result.stderr.str()
    assert "Warning" not in result.stderr.str()
    with np.load(pytester.path / "run" / "model_linalg.forward.npz") as recorded:
        assert [recorded[f"output_{i}"].shape for i in range(3)] == [(2, 3, 8), (1, 2, 8), (1, 2, 8)]
    assert "-> (tensor<2x3x8xf32>, tensor<1x2x8xf32>, tensor<1x2x8xf32>)" in (
        pytester.path / "run" / "model_linalg.mlir").read_text()


@pytest.mark.slow
def test_import_torch_names_the_op_it_cannot_import_in_one_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(models=TUPLE_AND_FFT)
    result = pytester.run(CLI, "import-torch", "models.py:spectrum", "run")
    assert result.ret == 2
    assert len(result.stderr.lines) == 1, result.stderr.str()
    result.stderr.fnmatch_lines(
        ["mlir-snippets import-torch: torch-mlir: 'math.absf' op *complex<f32>* (at *models.py:*)"])
    assert not (pytester.path / "run").exists()


def test_new_iteration_into_a_closed_pipe_prints_no_traceback(pytester: pytest.Pytester) -> None:
    """``mlir-snippets new-iteration RUN | head -1``: the reader gone, no BrokenPipeError."""
    run = pytester.mkdir("run")
    (run / "model_linalg.mlir").write_text("func.func @f(%a: f32) -> f32 {\n  return %a : f32\n}\n")
    read, write = os.pipe()
    os.close(read)  # every write to the pipe fails (EPIPE)
    try:
        done = subprocess.run([CLI, "new-iteration", str(run)], stdout=write, stderr=subprocess.PIPE, text=True,
                              check=False)
    finally:
        os.close(write)
    assert done.stderr == "" and done.returncode == 141, done.stderr
    assert (run / "v0" / "transform.mlir").is_file()
