"""ONNX ops expanded by worker/lowering/onnx/ into ops torch-mlir converts, each against
ONNX's reference implementation on random inputs (seeded) over several shapes and attributes."""

from __future__ import annotations

import numpy as np
import pytest

from onnx_cases import Case, write_case

pytest.importorskip("onnx")
pytest.importorskip("torch_mlir")
pytestmark = pytest.mark.slow


def run_cases(pytester: pytest.Pytester, run_items, cases: list[Case]) -> dict[str, dict[str, str]]:
    for case in cases:
        write_case(pytester.path, case)
    result, props = run_items("-rA")
    executes = {k.split("::")[1]: v for k, v in props.items() if k.endswith("[execute]")}
    assert len(executes) == len(cases), result.stdout.str()
    return executes


def assert_all_pass_on_recorded(executes: dict[str, dict[str, str]]) -> None:
    failed = {name: p.get("mlir_message", p["outcome"]) for name, p in executes.items()
              if p["outcome"] != "passed" or p.get("mlir_golden") != "recorded"}
    assert not failed, failed


def test_dft_against_the_reference(pytester: pytest.Pytester, run_items) -> None:
    rng = np.random.default_rng(7)
    real = rng.standard_normal((2, 6, 5, 1)).astype(np.float32)
    complex_ = rng.standard_normal((3, 8, 2)).astype(np.float32)
    cases = [
        Case("dft_real_axis1", "DFT", [real], {"axis": 1}, opset=19),
        Case("dft_real_axis2_onesided", "DFT", [real], {"axis": 2, "onesided": 1}, opset=19),
        Case("dft_complex_inverse", "DFT", [complex_], {"axis": 1, "inverse": 1}, opset=19),
        Case("dft_padded_length", "DFT", [complex_, np.array(11, np.int64)], {"axis": 1}, opset=19),
        Case("dft_truncated_axis_input", "DFT", [real, np.array(4, np.int64), np.array(-3, np.int64)], opset=20),
        Case("dft_f64_default_axis", "DFT", [rng.standard_normal((4, 7, 2))], opset=20),
    ]
    assert_all_pass_on_recorded(run_cases(pytester, run_items, cases))
