"""Records say what they are (``subject_kind``), the reports read that and the records'
own targets, and records written before ``subject_kind`` existed read back the same."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pytest_mlir_snippets.model.record import ItemRecord, check_json
from pytest_mlir_snippets.protocol import Kind, Outcome, Stage, SubjectKind
from pytest_mlir_snippets.reporting.publish import summary_lines
from pytest_mlir_snippets.reporting.runreport import RunInfo, render_combined, render_file_report

CLI = str(Path(sys.executable).with_name("mlir-snippets"))

GOOD = """func.func @add_0(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def record(function: str, stage: Stage, subject_kind: SubjectKind = SubjectKind.SNIPPET,
           **fields: object) -> ItemRecord:
    file = fields.pop("file", "ops.mlir")
    made = ItemRecord(f"{file}::{function}[{stage}]", f"{function}[{stage}]", str(file), function, stage,
                      subject_kind=subject_kind, **fields)  # type: ignore[arg-type]
    made.outcome = made.outcome or Outcome.PASSED
    return made


@pytest.mark.parametrize(("fields", "expected"), [
    ({"function": "add_0", "stage": "compile"}, SubjectKind.SNIPPET),
    ({"function": "<file>", "stage": "file"}, SubjectKind.SNIPPET),
    ({"function": "v3", "stage": "benchmark", "run": "run"}, SubjectKind.ITERATION),
    ({"function": "pytorch", "stage": "pytorch", "run": "run"}, SubjectKind.PYTORCH),
    ({"function": "pytorch", "stage": "pytorch_compile", "run": "run"}, SubjectKind.PYTORCH),
    ({"function": "run", "stage": "contract", "run": "run"}, SubjectKind.RUN),
    ({"function": "entry-run2", "stage": "execute", "info": {"command": "mlir-runner %s"}}, SubjectKind.LIT),
    ({"function": "test_neg", "stage": "call"}, SubjectKind.PYTHON),
])
def test_a_record_written_before_subject_kind_gets_it_when_read(fields: dict[str, object],
                                                               expected: SubjectKind) -> None:
    data = {"nodeid": "x", "name": "x", "file": "f.mlir", **fields}
    check_json(data)
    assert ItemRecord.from_json(data).subject_kind is expected
    # one that has it keeps it, whatever its name says
    assert ItemRecord.from_json({**data, "subject_kind": "lit"}).subject_kind is SubjectKind.LIT


def test_a_subject_kind_that_is_not_one_is_a_wrong_document() -> None:
    with pytest.raises(TypeError, match="not a valid SubjectKind"):
        check_json({"nodeid": "x", "name": "x", "file": "f", "function": "f", "stage": "compile",
                    "subject_kind": "iterations"})


def test_the_summary_counts_iterations_by_subject_kind_not_by_name() -> None:
    """A run's items are counted by what they are: an iteration whatever its name, the
    PyTorch reference and a run's contract as run items."""
    run = {"file": "run/model_linalg.mlir", "run": "run"}
    records = [record("v1", Stage.CORRECTNESS, SubjectKind.ITERATION, **run),
               record("pytorch", Stage.PYTORCH, SubjectKind.PYTORCH, kind=Kind.CRASH, outcome=Outcome.FAILED, **run)]
    lines = [text for text, _ in summary_lines(records, 1)]
    assert lines[-1] == "1 run item(s) failed across 1 file(s)", lines
    records[1] = record("pytorch", Stage.PYTORCH, SubjectKind.ITERATION, **run)  # an iteration named pytorch
    assert [text for text, _ in summary_lines(records, 1)][-1] == "all 2 iteration(s) succeeded across 1 file(s)"


def test_the_run_reports_header_names_the_records_targets() -> None:
    """A RUN command runs on cpu whatever --mlir-target: a run on cuda whose file holds only
    RUN commands is headed cpu; the combined report names every target its records ran on."""
    run = RunInfo("cuda", "compile and execute")
    lit = [record("entry", Stage.COMPILE, SubjectKind.LIT, file="lit.mlir", target="cpu")]
    snippet = [record("add_0", Stage.COMPILE, target="cuda")]
    assert "\ntarget:   cpu\n" in render_file_report(Path("lit.mlir"), [("entry", 1)], lit, run)
    assert "\ntarget:   cuda\n" in render_file_report(Path("ops.mlir"), [("add_0", 1)], snippet, run)
    assert "\ntarget:   cuda\n" in render_file_report(Path("empty.mlir"), [], [], run)  # no records: the run's
    combined = render_combined({Path("lit.mlir"): lit, Path("ops.mlir"): snippet}, {}, run)
    assert "\ntarget:   cpu, cuda\n" in combined


def test_a_json_of_records_without_subject_kind_rebuilds_the_same_reports(pytester: pytest.Pytester) -> None:
    """``mlir-snippets report`` of shards written before records had ``subject_kind`` (and
    before ``not_run_files``) writes the reports the run wrote."""
    pytester.makefile(".mlir", ops=GOOD + GOOD.replace("add_0", "add_1"), other=GOOD.replace("add_0", "add_2"))
    pytester.runpytest("-p", "no:cacheprovider", "--mlir-skip-exec", "-k", "not add_1", "--mlir-json=new.json")
    new = json.loads((pytester.path / "new.json").read_text())
    assert {item["subject_kind"] for item in new["items"]} == {"snippet"}
    assert [(item["input_shapes"], item["input_dtypes"]) for item in new["items"]] == [(["4", "4"], ["f32", "f32"])] * 2
    assert new["not_run_files"] == {"ops.mlir::add_1[compile]": "ops.mlir"}
    for item in new["items"]:
        del item["subject_kind"]
    del new["not_run_files"]
    (pytester.path / "old.json").write_text(json.dumps(new))
    for name in ("new", "old"):
        out = pytester.path / name
        assert pytester.run(CLI, "report", str(pytester.path / f"{name}.json"), "--out", str(out)).ret == 0
        for report in ("ops-run-report.txt", "other-run-report.txt", "mlir-snippets-combined-report.txt"):
            assert (out / report).read_text() == (pytester.path / report).read_text(), (name, report)
    assert "not run:  ops.mlir::add_1[compile]" in (pytester.path / "ops-run-report.txt").read_text()
    assert "not run:" not in (pytester.path / "other-run-report.txt").read_text()


def test_a_failure_signature_comes_from_the_structured_diagnostics() -> None:
    """The first error's place (``<path>:N:N``), severity and MLIR's words with numbers
    masked; a warning before it is passed over even where the file's path says error."""
    from pytest_mlir_snippets.items.failures import failure_signature, item_signature, signature_lines
    from pytest_mlir_snippets.protocol import Diagnostic, Response

    path = Path("/tmp/test_errors0/ops.mlir")
    warning = Diagnostic("warning", "unused value", 2, 3)
    error = Diagnostic("error", "'tensor<4xf32>' at 0x7f00 differs from /usr/lib/x.so", 7, 9,
                       [Diagnostic("note", "see 12 here", 1, 1)])
    lines = signature_lines([warning, error], path, ["LLVM ERROR: out of 4096 bytes"])
    assert lines == [(False, "<path>:N:N: warning: unused value"),
                     (True, "<path>:N:N: error: 'tensor<Nxf32>' at Nx? differs from <path>"),
                     (False, "<path>:N:N: note: see N here"), (True, "LLVM ERROR: out of N bytes")]
    assert failure_signature(lines, "") == "<path>:N:N: error: 'tensor<Nxf32>' at Nx? differs from <path>"
    assert failure_signature(lines[:1], "") == "<path>:N:N: warning: unused value"
    assert failure_signature([], "contract: 2 files of v12 are missing\nmore") == \
        "contract: N files of v12 are missing"
    split = signature_lines([error], Path("<mlir>"), None, lambda line: None)[0][1]
    assert split.startswith("<mlir> (split module line N:N): error:")
    failed = Response(Kind.COMPILE_ERROR, "bad", [warning], stderr="error: from the worker 3\n")
    assert item_signature(failed, path, None, True, "bad") == "error: from the worker N"
    assert item_signature(failed, path, None, False, "bad") == "<path>:N:N: warning: unused value"
    assert item_signature(Response(Kind.PASS), path, None, True, "pass (failure expected)") == \
        "pass (failure expected)"


def test_input_shapes_and_types_come_from_the_input_specs() -> None:
    """The worker says each input's shape and element type; the junit properties are
    those, not the type's text read back (which reads ``memref<4xvector<2xf32>>`` as shape
    ``4xvector<2``); a record without them (JSON written before) still reads its types."""
    from pytest_mlir_snippets.golden.inputs import TypeSpec
    from pytest_mlir_snippets.model.record import junit_properties

    nested = TypeSpec("memref", "vector<2xf32>", (4,))
    specs = [nested, TypeSpec("tensor", "f32", (None, 3)), TypeSpec("tensor", "i1"), TypeSpec("scalar", "index")]
    assert [s.dims for s in specs] == ["4", "?x3", "0-d", "scalar"]
    made = record("f", Stage.COMPILE, inputs=[str(s) for s in specs], input_shapes=[s.dims for s in specs],
                  input_dtypes=[s.element for s in specs])
    props = dict(junit_properties(made))
    assert (props["mlir_input_shapes"], props["mlir_input_dtypes"]) == ("4; ?x3; 0-d; scalar",
                                                                        "vector<2xf32>; f32; i1; index")
    older = dict(junit_properties(record("f", Stage.COMPILE, inputs=["tensor<4x?xf32>", "i32"])))
    assert (older["mlir_input_shapes"], older["mlir_input_dtypes"]) == ("4x?; scalar", "f32; i32")
