"""``stablehlo.fft``, which the StableHLO interpreter does not evaluate (it is given the
same expansion, worker/lowering/shlo/fft.py), checked against numpy's transforms: every
type, one to three dimensions, f32 and f64, an empty operand, three seeds."""

from __future__ import annotations

import numpy as np
import pytest

FFT = """func.func @fft_2d(%x: tensor<3x5x8xcomplex<f32>>) -> tensor<3x5x8xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = FFT, length = [5, 8] : (tensor<3x5x8xcomplex<f32>>) -> tensor<3x5x8xcomplex<f32>>
  return %0 : tensor<3x5x8xcomplex<f32>>
}
func.func @ifft_1d(%x: tensor<4x6xcomplex<f64>>) -> tensor<4x6xcomplex<f64>> {
  %0 = stablehlo.fft %x, type = IFFT, length = [6] : (tensor<4x6xcomplex<f64>>) -> tensor<4x6xcomplex<f64>>
  return %0 : tensor<4x6xcomplex<f64>>
}
func.func @rfft_2d(%x: tensor<2x6x9xf32>) -> tensor<2x6x5xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = RFFT, length = [6, 9] : (tensor<2x6x9xf32>) -> tensor<2x6x5xcomplex<f32>>
  return %0 : tensor<2x6x5xcomplex<f32>>
}
func.func @irfft_2d(%x: tensor<3x4x5xcomplex<f64>>) -> tensor<3x4x8xf64> {
  %0 = stablehlo.fft %x, type = IRFFT, length = [4, 8] : (tensor<3x4x5xcomplex<f64>>) -> tensor<3x4x8xf64>
  return %0 : tensor<3x4x8xf64>
}
func.func @irfft_odd(%x: tensor<6x4xcomplex<f32>>) -> tensor<6x7xf32> {
  %0 = stablehlo.fft %x, type = IRFFT, length = [7] : (tensor<6x4xcomplex<f32>>) -> tensor<6x7xf32>
  return %0 : tensor<6x7xf32>
}
func.func @fft_empty(%x: tensor<2x0x3xcomplex<f32>>) -> tensor<2x0x3xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = FFT, length = [3] : (tensor<2x0x3xcomplex<f32>>) -> tensor<2x0x3xcomplex<f32>>
  return %0 : tensor<2x0x3xcomplex<f32>>
}
"""
NUMPY_FFT = {
    "fft_2d": lambda x: np.fft.fftn(x, axes=(1, 2)),
    "ifft_1d": lambda x: np.fft.ifft(x, axis=1),
    "rfft_2d": lambda x: np.fft.rfftn(x, axes=(1, 2)),
    "irfft_2d": lambda x: np.fft.irfftn(x, s=(4, 8), axes=(1, 2)),
    "irfft_odd": lambda x: np.fft.irfft(x, n=7, axis=1),
    "fft_empty": lambda x: x,
}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fft_matches_numpy(seed: int) -> None:
    from pytest_mlir_snippets.golden.inputs import make_inputs
    from pytest_mlir_snippets.mlirtext.splitter import SnippetSource
    from pytest_mlir_snippets.protocol import Options
    from pytest_mlir_snippets.worker.targets.cpu import CpuBackend

    backend = CpuBackend()
    source = SnippetSource(FFT)
    for function in source.functions:
        compiled = backend.compile(source.split(function).text, function.name, Options())
        (x,) = make_inputs(compiled.signature[0], seed, 4)
        (out,) = backend._run(compiled, [x])
        want = NUMPY_FFT[function.name](x.astype(np.complex128 if x.dtype.kind == "c" else np.float64))
        tolerance = 1e-12 if out.dtype in (np.float64, np.complex128) else 1e-5
        assert out.shape == want.shape and np.allclose(out, want, rtol=tolerance, atol=tolerance), function.name


def test_fft_runs_against_the_interpreter(pytester: pytest.Pytester, run_items) -> None:
    """Without checks, such snippets get the interpreter as their golden (it runs the
    expansion; it aborted the worker on the op itself)."""
    pytester.makefile(".mlir", fft=FFT)
    _, props = run_items()
    assert {node: p.get("mlir_kind", p["outcome"]) for node, p in props.items()} == dict.fromkeys(props, "pass")
    assert len(props) == 12
    assert {p["mlir_reference"] for node, p in props.items() if node.endswith("[execute]")} == {
        "StableHLO reference interpreter"}
