"""Recorded golden data: IREE's run_module_io_flags.txt layout and npz sidecars."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pytest_mlir_snippets.recorded import RecordedDataError, load_recorded, parse_iree_flags

ROOT = Path(__file__).resolve().parent.parent


def test_iree_flags_files_inline_values_and_i1(tmp_path: Path) -> None:
    np.arange(12, dtype=np.float32).tofile(tmp_path / "input_0.bin")
    np.array([1, 0, 1], dtype=np.uint8).tofile(tmp_path / "output_0.bin")
    (tmp_path / "run_module_io_flags.txt").write_text(
        "--device=local-task\n--input=3x4xf32=@input_0.bin\n--input=i64=7\n--input=2xi32=[1 2]\n"
        "--expected_output=3xi1=@output_0.bin\n")
    inputs, outputs = parse_iree_flags(tmp_path / "run_module_io_flags.txt")
    assert inputs[0].shape == (3, 4) and inputs[0].dtype == np.float32 and inputs[0][2, 3] == 11
    assert inputs[1].shape == () and inputs[1] == 7 and inputs[1].dtype == np.int64
    assert inputs[2].tolist() == [1, 2]
    assert outputs[0].dtype == np.bool_ and outputs[0].tolist() == [True, False, True]


def test_bad_recorded_data_says_where(tmp_path: Path) -> None:
    (tmp_path / "input_0.bin").write_bytes(b"\x00" * 10)
    (tmp_path / "run_module_io_flags.txt").write_text("--input=3x4xf32=@input_0.bin\n")
    with pytest.raises(RecordedDataError, match=r"run_module_io_flags.txt:1: input_0.bin has 10 bytes, 3x4xf32 "
                                                r"needs 48"):
        parse_iree_flags(tmp_path / "run_module_io_flags.txt")
    (tmp_path / "run_module_io_flags.txt").write_text("--input=2xc64=@input_0.bin\n")
    with pytest.raises(RecordedDataError, match="element type 'c64' is not supported"):
        parse_iree_flags(tmp_path / "run_module_io_flags.txt")
    assert load_recorded(tmp_path / "model.mlir", "f", functions_in_file=2) is None  # one function only


IREE_TESTS = ["test_and4d", "test_cast_FLOAT_to_BFLOAT16", "test_argmax_default_axis_random_select_last_index",
              "test_top_k", "test_cast_DOUBLE_to_FLOAT16", "test_batchnorm_epsilon"]


def test_iree_tests_run_against_their_recorded_outputs(pytester: pytest.Pytester, run_items, copy_into,
                                                        corpus: Path) -> None:
    for name in IREE_TESTS:
        copy_into(corpus / "iree-onnx-ops" / name)
    (pytester.path / "test_and4d" / "output_0.bin").write_bytes(  # a wrong expected output must be caught
        bytes(1 - b for b in (corpus / "iree-onnx-ops" / "test_and4d" / "output_0.bin").read_bytes()))
    result, props = run_items()
    executes = {n.split("/")[0]: p for n, p in props.items() if n.endswith("[execute]")}
    assert executes["model.mlir::test_and4d[execute]"]["mlir_kind"] == "golden-mismatch"
    for name in IREE_TESTS[1:]:
        item = executes[f"model.mlir::{name}[execute]"]
        assert item["mlir_kind"] == "pass", (name, result.stdout.str()[-3000:])
        assert item["mlir_reference"] == "recorded outputs (run_module_io_flags.txt)"


@pytest.mark.slow
def test_conformance_doc_matches_a_fresh_run(tmp_path: Path, corpus: Path) -> None:
    out = tmp_path / "conformance.md"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "conformance.py"), "--corpus", str(corpus),
                    "--out", str(out)], check=True, capture_output=True)

    def stable(text: str) -> list[str]:
        """Without what changes from run to run: the date, wall times, and the numbers
        in signatures of tests whose reference involves random draws (bernoulli)."""
        lines = []
        for line in text.splitlines():
            if line.startswith("Written by"):
                continue
            if "wall at" in line:
                line = line.split(", ")[0]
            if line.startswith("| `"):
                line = "|".join(line.split("|")[:4])
            lines.append(line)
        return lines

    assert stable(out.read_text()) == stable((ROOT / "docs" / "conformance.md").read_text())
