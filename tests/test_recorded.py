"""Recorded golden data: IREE's run_module_io_flags.txt layout and npz sidecars."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pytest_mlir_snippets.golden.recorded import RecordedDataError, load_recorded, parse_iree_flags

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


class Touches:
    """Unpickled, it creates ``marker``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return Path.touch, (Path(self.marker),)


def test_sidecars_are_arrays_never_pickles(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    sidecar = tmp_path / "ops.f.npz"
    np.savez(sidecar, input_0=np.ones(2), input_1=np.array([Touches(marker)], dtype=object))
    with pytest.raises(RecordedDataError, match=r"^ops\.f\.npz: input_1 is an array of Python objects "
                                                r"\(pickled data\): it is not loaded"):
        load_recorded(tmp_path / "ops.mlir", "f", functions_in_file=1)
    sidecar.write_bytes(pickle.dumps({"input_0": Touches(marker)}))
    with pytest.raises(RecordedDataError, match=r"^ops\.f\.npz is a pickle, not an \.npz archive of arrays"):
        load_recorded(tmp_path / "ops.mlir", "f", functions_in_file=1)
    sidecar.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(RecordedDataError, match=r"^cannot read ops\.f\.npz: "):
        load_recorded(tmp_path / "ops.mlir", "f", functions_in_file=1)
    np.save(tmp_path / "one.npy", np.ones(2))
    (tmp_path / "one.npy").rename(sidecar)
    with pytest.raises(RecordedDataError, match=r"^ops\.f\.npz is a single \.npy array, not an \.npz archive"):
        load_recorded(tmp_path / "ops.mlir", "f", functions_in_file=1)
    assert not marker.exists()
    np.savez(sidecar, output_0=np.zeros(3), input_1=np.ones(1), input_0=np.arange(2))
    recorded = load_recorded(tmp_path / "ops.mlir", "f", functions_in_file=1)
    assert recorded is not None and [a.tolist() for a in recorded.inputs] == [[0, 1], [1.0]]
    assert recorded.outputs is not None and [a.tolist() for a in recorded.outputs] == [[0.0, 0.0, 0.0]]


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


REDUCE_SUM = """module {
  func.func @reduce(%arg0: !torch.vtensor<[3,2,2],f32>, %arg1: !torch.vtensor<[1],si64>) -> !torch.vtensor<[3,2],f32>
      attributes {torch.onnx_meta.ir_version = 7 : si64, torch.onnx_meta.opset_version = 17 : si64} {
    %0 = torch.operator "onnx.ReduceSum"(%arg0, %arg1) {torch.onnx.keepdims = 0 : si64}
        : (!torch.vtensor<[3,2,2],f32>, !torch.vtensor<[1],si64>) -> !torch.vtensor<[3,2],f32>
    return %0 : !torch.vtensor<[3,2],f32>
  }
}
"""


def test_axes_given_as_inputs_are_baked_from_the_recorded_data(pytester: pytest.Pytester, run_items) -> None:
    """ONNX tests give axes as inputs; torch-mlir needs them constant. With recorded
    data the value is baked in and the report says so; without, MLIR's error stays."""
    x = np.arange(12, dtype=np.float32).reshape(3, 2, 2)
    for folder, axis in (("axis2", 2), ("axis1", 1)):
        (pytester.path / folder).mkdir()
        (pytester.path / folder / "model.mlir").write_text(REDUCE_SUM)
        np.save(pytester.path / folder / "x.npy", x)  # unrelated files are ignored
        np.savez(pytester.path / folder / "model.reduce.npz", input_0=x, input_1=np.array([axis]),
                 output_0=x.sum(axis=axis) + (axis == 1))  # axis 1: a wrong expected output
    (pytester.path / "plain").mkdir()
    (pytester.path / "plain" / "model.mlir").write_text(REDUCE_SUM)
    result, _ = run_items("-rA")
    lines = result.stdout.str()
    assert "PASSED axis2/model.mlir::reduce[execute]" in lines, lines[-3000:]
    assert "FAILED axis1/model.mlir::reduce[execute]" in lines  # baking does not make a wrong answer pass
    assert "FAILED plain/model.mlir::reduce[compile]" in lines
    plain = (pytester.path / "plain" / "model-run-report.txt").read_text()
    assert "failed to legalize operation 'torch.aten.sum.dim_IntList'" in plain and "baked:" not in plain, plain
    report = (pytester.path / "axis2" / "model-run-report.txt").read_text()
    assert "baked: input #1 = [2]" in report, report


LOSSES = ["test_nllloss_NCd1d2", "test_sce_mean_weight", "test_sce_NCd1d2d3d4d5_none_no_weight"]


def test_losses_over_more_than_two_dims_and_weighted_means(pytester: pytest.Pytester, run_items,
                                                           copy_into, corpus: Path) -> None:
    """torch-mlir lowers nll/cross-entropy over 2-D inputs only, and its weighted-mean
    cross-entropy divides by an integer sum of weights; our rewrite matches ONNX's outputs."""
    for name in LOSSES:
        copy_into(corpus / "iree-onnx-ops" / name)
    result, props = run_items()
    for name in LOSSES:
        assert props[f"model.mlir::{name}[execute]"]["mlir_kind"] == "pass", result.stdout.str()[-3000:]


@pytest.mark.slow
def test_conformance_doc_matches_a_fresh_run(tmp_path: Path, corpus: Path) -> None:
    """The tt-mlir section of docs/conformance.md against a fresh run of the script: the
    script and the page agree (a whole corpus is not a CI test: the other sections take a
    minute or more each; ``python scripts/conformance.py`` rewrites them all)."""
    out = tmp_path / "conformance.md"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "conformance.py"), "--corpus", str(corpus),
                    "--out", str(out), "--suite", "tt-mlir", "--workers", "0"],  # -n 0: no xdist worker to start
                   check=True, capture_output=True)

    def stable(text: str) -> list[str]:
        """The two sections, without what changes from run to run: the date, wall times,
        and the numbers in signatures of tests whose reference involves random draws."""
        lines, keep = [], False
        for line in text.splitlines():
            if line.startswith("## "):
                keep = line.startswith("## tt-mlir")
            if not keep or not line.strip():
                continue
            if "wall at" in line:
                line = line.split(", ")[0]
            if line.startswith("| `"):
                line = "|".join(line.split("|")[:4])
            lines.append(line)
        return lines

    assert stable(out.read_text()) == stable((ROOT / "docs" / "conformance.md").read_text())


@pytest.mark.parametrize("line, says", [
    ("--expected_outputs=4xf32=@output_0.bin",
     r"unknown flag --expected_outputs in '--expected_outputs=4xf32=@output_0\.bin': iree-run-module rejects it "
     r"\(did you mean --expected_output\?\)"),
    ("expected_output=4xf32=@output_0.bin", r"'expected_output=4xf32=@output_0\.bin' is not a flag"),
    ("--expected_output=", r"--expected_output gives no buffer"),
    ("--expected_f32_threshold=tight", r"--expected_f32_threshold is not a number"),
    ("--parameters=model.irpa", r"--parameters: parameters loaded at run time are not supported"),
])
def test_an_iree_flag_the_plugin_does_not_follow_is_an_error_naming_it(tmp_path: Path, line: str, says: str) -> None:
    """iree-run-module rejects a flagfile with an unknown flag: the recorded data is not read
    past it either (a typo of --expected_output would leave the outputs uncompared)."""
    (tmp_path / "input_0.bin").write_bytes(np.ones(4, np.float32).tobytes())
    (tmp_path / "output_0.bin").write_bytes(np.ones(4, np.float32).tobytes())
    flags = tmp_path / "run_module_io_flags.txt"
    flags.write_text(f"--device=local-task\n--input=4xf32=@input_0.bin\n{line}\n")
    with pytest.raises(RecordedDataError, match=r"run_module_io_flags\.txt:3: " + says):
        parse_iree_flags(flags)
    flags.write_text("# a comment\n--device=local-task\n--function=main\n--expected_f32_threshold=1e-3f\n"
                     "--input=4xf32=@input_0.bin\n\n--expected_output=4xf32=@output_0.bin\n")
    inputs, outputs = parse_iree_flags(flags)  # iree-run-module's own flags, kept as it keeps them
    assert len(inputs) == 1 and len(outputs) == 1


def test_a_flagfile_typo_is_an_execute_error_not_a_pass_on_another_golden(pytester: pytest.Pytester) -> None:
    """``--expected_outputs=`` (iree-run-module rejects it) with outputs 1.5x off: the item
    says the line and the flag; it is never judged against a reference instead."""
    (pytester.path / "model.mlir").write_text(
        "func.func @neg(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %0 = arith.negf %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n")
    given = np.arange(1, 5, dtype=np.float32)
    (pytester.path / "input_0.bin").write_bytes(given.tobytes())
    (pytester.path / "output_0.bin").write_bytes((-1.5 * given).tobytes())
    (pytester.path / "run_module_io_flags.txt").write_text(
        "--input=4xf32=@input_0.bin\n--expected_outputs=4xf32=@output_0.bin\n")
    out = pytester.path / "records.json"
    pytester.runpytest("-p", "no:cacheprovider", f"--mlir-json={out}")
    record = {r["name"]: r for r in json.loads(out.read_text())["items"]}["neg[execute]"]
    assert record["kind"] == "execute-error", record
    assert "run_module_io_flags.txt:2: unknown flag --expected_outputs" in record["message"], record["message"]
