"""``mlir-snippets record-goldens`` (issue 54) and ``// mlir-snippets: inputs=`` lines: sidecars
recorded from an independent reference pin today's verdicts (a sabotaged one is a
golden-mismatch), never overwritten without --force; an input range keeps log and sqrt
of seeded inputs finite."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_mlir_snippets.golden.inputs import TypeSpec, make_inputs
from pytest_mlir_snippets.golden.recorded import RecordedDataError, read_sidecar
from pytest_mlir_snippets.mlirtext.directives import DirectiveError, directive
from pytest_mlir_snippets.tools import cli

DATA = Path(__file__).resolve().parent / "data"
HAS_IREE = all(importlib.util.find_spec(m) is not None for m in ("iree.compiler", "iree.runtime"))
SHLO = """func.func @soft(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.multiply %a, %b : tensor<8xf32>
  %1 = stablehlo.exponential %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}
"""
LOGS = """func.func @log_sqrt(%a: tensor<16xf32>) -> tensor<16xf32> {
  %0 = math.log %a : tensor<16xf32>
  %1 = math.sqrt %a : tensor<16xf32>
  %2 = arith.addf %0, %1 : tensor<16xf32>
  return %2 : tensor<16xf32>
}
"""


def _records(pytester: pytest.Pytester) -> dict[str, dict[str, Any]]:
    out = pytester.path / "records.json"
    pytester.runpytest("-p", "no:cacheprovider", f"--mlir-json={out}")
    return {r["name"]: r for r in json.loads(out.read_text())["items"]}


def test_recorded_sidecars_pin_the_verdict_and_a_sabotaged_one_fails(pytester: pytest.Pytester,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = pytester.makefile(".mlir", ops=SHLO)
    assert cli.main(["record-goldens", str(path), "--from", "interpreter"]) == 0
    assert "wrote" in capsys.readouterr().out
    sidecar = pytester.path / "ops.soft.npz"
    inputs, outputs, reference = read_sidecar(sidecar)
    assert len(inputs) == 2 and len(outputs) == 1 and reference == "StableHLO reference interpreter"
    np.testing.assert_allclose(outputs[0], np.exp(inputs[0] * inputs[1]), rtol=1e-6)
    record = _records(pytester)["soft[execute]"]
    assert record["kind"] == "pass" and record["golden"] == "recorded" and record["computed"] == "runtime"
    assert record["reference"] == "recorded outputs (ops.soft.npz, from StableHLO reference interpreter)"

    assert cli.main(["record-goldens", f"{path}::soft", "--from", "interpreter"]) == 2  # it exists
    assert "give --force" in capsys.readouterr().err
    np.savez(sidecar, input_0=inputs[0], input_1=inputs[1], output_0=outputs[0] * 1.01, reference=np.array(reference))
    assert cli.main(["record-goldens", str(path), "--from", "interpreter"]) == 2
    record = _records(pytester)["soft[execute]"]
    assert record["kind"] == "golden-mismatch" and record["golden"] == "recorded", record["message"]
    assert cli.main(["record-goldens", f"{path}::soft", "--from", "interpreter", "--force"]) == 0
    assert _records(pytester)["soft[execute]"]["kind"] == "pass"


def test_a_reference_that_does_not_take_the_function_writes_nothing(pytester: pytest.Pytester,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = pytester.makefile(".mlir", ops=LOGS)
    assert cli.main(["record-goldens", str(path), "--from", "interpreter"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "ops.mlir::log_sqrt: StableHLO's reference interpreter" in err, err
    assert "does not take it" in err and not (pytester.path / "ops.log_sqrt.npz").exists()
    assert cli.main(["record-goldens", f"{path}::nothing", "--from", "interpreter"]) == 2
    assert "has no public function nothing (it has: log_sqrt)" in capsys.readouterr().err


def test_an_input_range_line_keeps_log_and_sqrt_finite(pytester: pytest.Pytester) -> None:
    """Normal inputs give log and sqrt NaNs, which match a reference's NaNs: a pass that
    says little. ``inputs=positive`` draws them in [0.1, 4): finite results, the same verdict."""
    if not HAS_IREE:
        pytest.skip("iree-cpu is the reference here")
    path = pytester.makefile(".mlir", ops=LOGS + "\n// mlir-snippets: inputs=positive\n"
                             + LOGS.replace("@log_sqrt", "@log_sqrt_positive"))
    assert cli.main(["record-goldens", str(path), "--from", "iree-cpu"]) == 0
    normal_in, normal_out, _ = read_sidecar(pytester.path / "ops.log_sqrt.npz")
    ranged_in, ranged_out, name = read_sidecar(pytester.path / "ops.log_sqrt_positive.npz")
    assert (normal_in[0] < 0).any() and np.isnan(normal_out[0]).any()
    assert ((ranged_in[0] >= 0.1) & (ranged_in[0] < 4)).all() and np.isfinite(ranged_out[0]).all()
    assert name.startswith("iree-cpu target")
    records = _records(pytester)
    assert records["log_sqrt_positive[execute]"]["kind"] == "pass"
    assert records["log_sqrt_positive[execute]"]["golden"] == "recorded"
    (pytester.path / "ops.log_sqrt_positive.npz").unlink()  # the plugin's own seeded inputs, the same range
    assert _records(pytester)["log_sqrt_positive[execute]"]["kind"] == "pass"


def test_input_ranges_are_read_and_drawn() -> None:
    assert directive(["// mlir-snippets: inputs=uniform(-2, 0.5) rtol=1e-3"]).inputs == (-2.0, 0.5)
    assert directive(["// mlir-snippets: inputs=positive"]).inputs == (0.1, 4.0)
    assert directive(["// mlir-snippets: inputs=normal"]).inputs is None
    assert directive(["// mlir-snippets: inputs=positive"]).empty  # sets no tolerance
    for bad, says in (("inputs=uniform(1,1)", "LO must be below HI"), ("inputs=big", "inputs=uniform(LO,HI)")):
        with pytest.raises(DirectiveError, match=says.replace("(", r"\(").replace(")", r"\)")):
            directive([f"// mlir-snippets: {bad}"])
    specs = [TypeSpec("tensor", "f32", (1000,)), TypeSpec("tensor", "i32", (1000,)), TypeSpec("tensor", "ui8", (9,))]
    floats, ints, small = make_inputs(specs, 0, 4, (0.5, 3.0))  # the integers in [0.5, 3.0): 1 and 2
    assert floats.min() >= 0.5 and floats.max() <= 3.0 and set(ints.tolist()) == {1, 2} and set(small) <= {1, 2}
    default = make_inputs(specs, 0, 4)
    assert default[0].min() < 0 and default[1].min() == -8 and default[2].max() <= 9  # the draw without a range


def test_a_reference_key_that_is_not_one_string_is_an_error(tmp_path: Path) -> None:
    np.savez(tmp_path / "f.npz", input_0=np.zeros(2), output_0=np.zeros(2), reference=np.zeros(2))
    with pytest.raises(RecordedDataError, match="reference is a float64 array"):
        read_sidecar(tmp_path / "f.npz")


def test_a_crash_on_the_way_is_one_line_and_no_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A pass that kills the worker (SIGFPE in torch-mlir's view lowering) is the sandbox's
    answer, in one line naming the function; nothing is written."""
    snippet = tmp_path / "view.mlir"
    shutil.copy(DATA / "hostile" / "torch_view_zero.mlir", snippet)
    assert cli.main(["record-goldens", str(snippet), "--from", "torch"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "view.mlir::view_zero" in err and "crash" in err, err
    assert not list(tmp_path.glob("*.npz"))
