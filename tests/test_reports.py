"""Run reports, JSON records, junit properties, HTML columns and expectations."""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from pathlib import Path

import pytest

from test_run import recorded

CLI = str(Path(sys.executable).with_name("mlir-snippets"))  # the venv's, PATH or not

GOOD = """func.func @add_0(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
BAD = """func.func @broken_0(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xi32>
  return %0 : tensor<4xf32>
}
"""
CHOLESKY = """func.func @cholesky_0(%arg0: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = "stablehlo.cholesky"(%arg0) {lower = true} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
"""
CRASHER = """func.func @wild_load(%t: tensor<4xf32>) -> f32 {
  %far = arith.constant 1099511627776 : index
  %0 = tensor.extract %t[%far] : tensor<4xf32>
  return %0 : f32
}
"""


def make_tree(pytester: pytest.Pytester) -> None:
    (pytester.path / "ops").mkdir()
    (pytester.path / "more").mkdir()
    (pytester.path / "ops" / "ops.mlir").write_text(GOOD + BAD + CRASHER)
    (pytester.path / "more" / "other.mlir").write_text(CHOLESKY + GOOD.replace("add_0", "add_1"))


def recorded_tree(pytester: pytest.Pytester) -> None:
    """make_tree's GOOD functions with their recorded golden."""
    recorded(pytester.path / "ops", "ops", "add_0")
    recorded(pytester.path / "more", "other", "add_1")


def reports_of(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*report*.txt"))}


def without_volatile(doc: dict) -> list[dict]:
    return [{k: v for k, v in item.items() if k not in ("duration", "seconds", "worker")} for item in doc["items"]]


@pytest.mark.slow
def test_reports_are_the_same_with_and_without_xdist(pytester: pytest.Pytester) -> None:
    make_tree(pytester)
    recorded_tree(pytester)
    serial = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--mlir-json=serial.json")
    first = reports_of(pytester.path)
    for path in pytester.path.rglob("*report*.txt"):
        path.unlink()
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "--mlir-json=parallel.json")
    second = reports_of(pytester.path)
    assert sorted(first) == ["mlir-snippets-combined-report.txt", "more/other-run-report.txt",
                             "ops/ops-run-report.txt"]
    assert first == second
    docs = [json.loads((pytester.path / name).read_text()) for name in ("serial.json", "parallel.json")]
    assert without_volatile(docs[0]) == without_volatile(docs[1]) and len(docs[0]["items"]) == 10
    serial.stdout.fnmatch_lines(["*items per outcome: compile-error 2, crash 1, pass 5, skip 2*",
                                 "*3 snippet(s) failed across 2 file(s)*"])


def test_a_record_crosses_to_the_xdist_controller_as_json_only_when_it_comes_back_equal() -> None:
    from pytest_mlir_snippets.model.record import ItemRecord, wire_text
    from pytest_mlir_snippets.model.recordinfo import RecordInfo
    from pytest_mlir_snippets.protocol import Stage

    record = ItemRecord(nodeid="ops.mlir::add_0[execute]", name="add_0[execute]", file="ops.mlir", function="add_0",
                        stage=Stage.EXECUTE)
    record.metrics, record.info = {"pcc": 0.99}, RecordInfo(fed_inputs=["%0", "%1"], cache="hit")
    data = record.to_json()
    text = wire_text(data)
    assert text is not None and json.loads(text) == data
    assert ItemRecord.from_json(json.loads(text)) == record
    # what JSON would change is left to xdist's own serializer, which keeps it as it is
    for changed in ({"fed_inputs": (0, 1)}, {"by_index": {0: "a"}}, {"limit": float("nan")}, {"set": {1}}):
        assert wire_text({**data, "info": changed}) is None, changed


def test_an_xdist_worker_sends_the_record_as_json_and_the_controller_gets_the_same_data(
        pytester: pytest.Pytester) -> None:
    from pytest_mlir_snippets.model.record import ItemRecord
    from pytest_mlir_snippets.protocol import Stage

    config = pytester.parseconfigure("-p", "no:cacheprovider")
    record = ItemRecord(nodeid="ops.mlir::add_0[compile]", name="add_0[compile]", file="ops.mlir",
                        function="add_0", stage=Stage.COMPILE).to_json()
    for info, sent_as in (({"fed_inputs": [0, 1]}, "mlir_record_json"), ({"fed_inputs": (0, 1)}, "mlir_record")):
        data = {**record, "info": info}
        report = pytest.TestReport("ops.mlir::add_0[compile]", ("ops.mlir", 0, "add_0[compile]"), {}, "passed",
                                   None, "call", mlir_record=data)
        config.workerinput = {"workerid": "gw0"}  # type: ignore[attr-defined]
        try:
            sent = config.hook.pytest_report_to_serializable(config=config, report=report)
        finally:
            del config.workerinput  # type: ignore[attr-defined]
        (not_sent,) = {"mlir_record", "mlir_record_json"} - {sent_as}
        assert sent_as in sent and not_sent not in sent
        received = config.hook.pytest_report_from_serializable(config=config, data=sent)
        assert received.mlir_record == data and "mlir_record_json" not in vars(received)
    config._ensure_unconfigure()


def test_file_report_sections(pytester: pytest.Pytester) -> None:
    make_tree(pytester)
    pytester.runpytest("-p", "no:cacheprovider", "ops")
    text = (pytester.path / "ops" / "ops-run-report.txt").read_text()
    assert text.startswith("MLIR snippet run report\ntarget:   cpu\n")
    assert f"input:    {pytester.path / 'ops' / 'ops.mlir'}" in text
    assert "mode:     compile and execute" in text
    assert "items:    6 (compile-error 1, crash 1, pass 3, skip 1)" in text
    assert "snippets: 3 (1 succeeded, 2 failed, 0 unsupported)" in text
    assert re.search(r"add_0 +1  pass +pass +differential:iree-cpu +0 +1\n", text), text
    assert re.search(r"broken_0 +5  compile-error +skip +- +- +-\n", text)
    assert re.search(r"wild_load +9  pass +crash +- +- +-\n", text)
    assert "failures: 2\n1. ops/ops.mlir::broken_0[compile]: compile-error" in text
    assert f"{pytester.path / 'ops' / 'ops.mlir'}:6:19: error: use of value '%a'" in text
    assert "signature: <path>:N:N: error: use of value '%a' expects different type than prior uses: " \
           "'tensor<Nxi32>' vs 'tensor<Nxf32>'" in text
    assert "2. ops/ops.mlir::wild_load[execute]: crash\n   the sandbox worker killed by SIGSEGV" in text
    assert not (pytester.path / "mlir-snippets-combined-report.txt").exists()  # one input, no combined report


def test_combined_report_never_overwrites_a_file_report(pytester: pytest.Pytester) -> None:
    make_tree(pytester)
    (pytester.path / "mlir-snippets-combined-report.mlir").write_text(GOOD)
    pytester.runpytest("-p", "no:cacheprovider", "--mlir-skip-exec")
    combined = (pytester.path / "mlir-snippets-combined-report.txt").read_text()
    own = (pytester.path / "mlir-snippets-combined-report-run-report.txt").read_text()
    assert combined.startswith("MLIR snippet run report (combined)") and "inputs:   3 file(s)" in combined
    assert own.startswith("MLIR snippet run report\n") and "mode:     compile only" in own
    assert f"{pytester.path / 'ops' / 'ops.mlir'}: 3 item(s), compile-error 1, pass 2" in combined


def test_reports_after_x_and_after_an_interrupt(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=BAD + GOOD)
    result = pytester.runpytest("-p", "no:cacheprovider", "-x")
    result.assert_outcomes(failed=1)
    text = (pytester.path / "ops-run-report.txt").read_text()
    assert re.search(r"broken_0 +1  compile-error +- ", text) and re.search(r"add_0 +5  - +- ", text)
    assert "run:      partial: 3 of the inputs' items or files not run in this run" in text
    assert "not run:  ops.mlir::add_0[compile]\nnot run:  ops.mlir::add_0[execute]\n" in text
    pytester.makeconftest("""
def pytest_runtest_call(item):
    if item.name == "add_0[compile]":
        raise KeyboardInterrupt
""")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == 2  # interrupted
    text = (pytester.path / "ops-run-report.txt").read_text()
    assert re.search(r"broken_0 +1  compile-error +skip ", text) and re.search(r"add_0 +5  - +- ", text)
    assert "status:   interrupted (Ctrl-C): the items it did not reach are missing here" in text
    assert "not run:  ops.mlir::add_0[execute]" in text
    assert not list(pytester.path.glob(".ops-run-report.txt.*"))  # no temporary file left behind


def test_a_partial_run_says_what_it_left_out_and_never_keeps_a_fixed_failure(pytester: pytest.Pytester) -> None:
    """--lf after a fix rewrites the combined report (one file run, the other left out
    by --lf): the fixed failure is gone, and the report says what this run did not run;
    the file's own report is its last full run with this run's items updated."""
    (pytester.path / "ops").mkdir()
    (pytester.path / "more").mkdir()
    (pytester.path / "ops" / "ops.mlir").write_text(GOOD + BAD)
    (pytester.path / "more" / "other.mlir").write_text(GOOD.replace("add_0", "add_1"))
    pytester.runpytest("--mlir-skip-exec").assert_outcomes(passed=2, failed=1)
    combined = pytester.path / "mlir-snippets-combined-report.txt"
    assert "ops/ops.mlir::broken_0[compile]: compile-error" in combined.read_text()
    (pytester.path / "ops" / "ops.mlir").write_text(GOOD + BAD.replace("tensor<4xi32>", "tensor<4xf32>"))
    pytester.runpytest("--mlir-skip-exec", "--lf").assert_outcomes(passed=1)
    text = combined.read_text()
    assert "failures: 0" in text and "broken_0" not in text, text
    assert "run:      partial: 2 of the inputs' items or files not run in this run" in text
    assert "not run:  ops/ops.mlir::add_0[compile]\nnot run:  more/other.mlir (the whole file)\n" in text
    own = (pytester.path / "ops" / "ops-run-report.txt").read_text()  # the full run's, updated by this one
    assert "run:      the full run of " in own and "1 not run this time" in own and "failures: 0" in own
    assert re.search(r"add_0 +1  pass[ -]*\n", own)  # the full run's, not marked
    assert re.search(r"broken_0 +5  pass .* \d\d:\d\d:\d\d\n", own)  # this run's, marked with its start


def test_report_dir_takes_the_reports_away_from_the_inputs(pytester: pytest.Pytester) -> None:
    make_tree(pytester)
    pytester.makeini("[pytest]\nmlir_report_dir = out\n")
    pytester.runpytest("-p", "no:cacheprovider", "--mlir-skip-exec")
    assert sorted(reports_of(pytester.path)) == ["out/mlir-snippets-combined-report.txt",
                                                 "out/more/other-run-report.txt", "out/ops/ops-run-report.txt"]
    pytester.runpytest("-p", "no:cacheprovider", "--mlir-skip-exec", "--mlir-report-dir", "elsewhere", "ops")
    assert "elsewhere/ops/ops-run-report.txt" in reports_of(pytester.path)


def test_json_junit_and_rebuilt_reports(pytester: pytest.Pytester, run_items) -> None:
    make_tree(pytester)
    recorded_tree(pytester)
    _, props = run_items("--mlir-json=run.json")
    doc = json.loads((pytester.path / "run.json").read_text())
    items = {item["nodeid"]: item for item in doc["items"]}
    assert doc["files"] == {"more/other.mlir": [["cholesky_0", 1], ["add_1", 5]],
                            "ops/ops.mlir": [["add_0", 1], ["broken_0", 5], ["wild_load", 9]]}
    add = items["ops/ops.mlir::add_0[execute]"]
    assert add["kind"] == "pass" and add["metrics"]["pcc"] == pytest.approx(1.0) and add["line"] == 1
    assert add["inputs"] == ["tensor<4xf32>", "tensor<4xf32>"] and add["duration"] > 0
    cholesky = items["more/other.mlir::cholesky_0[compile]"]
    assert cholesky["signature"] == "<path>:N:N: error: failed to legalize operation 'stablehlo.cholesky'"
    junit = props["ops.mlir::add_0[execute]"]
    assert (junit["mlir_op"], junit["mlir_target"], junit["mlir_input_shapes"], junit["mlir_input_dtypes"]) == (
        "add_0", "cpu", "4; 4", "f32; f32")
    assert props["ops.mlir::broken_0[compile]"]["mlir_failure_stage"] == "compile"
    before = reports_of(pytester.path)
    for path in pytester.path.rglob("*report*.txt"):
        path.unlink()
    rebuilt = pytester.run(CLI, "report", str(pytester.path / "run.json"))
    assert rebuilt.ret == 1
    rebuilt.stdout.fnmatch_lines(["items per outcome: compile-error 2, crash 1, pass 5, skip 2",
                                  "3 snippet(s) failed across 2 file(s)"])
    assert reports_of(pytester.path) == before


def test_shards_merge_into_one_report(pytester: pytest.Pytester) -> None:
    make_tree(pytester)
    recorded_tree(pytester)
    pytester.runpytest("-p", "no:cacheprovider", "--mlir-json=a.json", "ops")
    pytester.runpytest("-p", "no:cacheprovider", "--mlir-json=b.json", "more")
    out = pytester.path / "merged"
    result = pytester.run(CLI, "report", "a.json", "b.json", "--out", str(out), "--json", "all.json")
    result.stdout.fnmatch_lines(["3 snippet(s) failed across 2 file(s)"])
    assert sorted(reports_of(out)) == ["mlir-snippets-combined-report.txt", "more/other-run-report.txt",
                                       "ops/ops-run-report.txt"]
    assert len(json.loads((pytester.path / "all.json").read_text())["items"]) == 10


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_reports_and_json_follow_the_umask(pytester: pytest.Pytester, umask: int) -> None:
    pytester.makefile(".mlir", ops=GOOD)
    previous = os.umask(umask)
    try:
        pytester.runpytest("-p", "no:cacheprovider", "--mlir-skip-exec", "--mlir-json=run.json").assert_outcomes(
            passed=1)
    finally:
        os.umask(previous)
    for name in ("ops-run-report.txt", "run.json"):
        assert stat.S_IMODE((pytester.path / name).stat().st_mode) == 0o666 & ~umask, name


def test_read_only_input_folder_costs_nothing_but_a_warning(pytester: pytest.Pytester) -> None:
    folder = pytester.mkdir("ro")
    (folder / "ops.mlir").write_text(GOOD)
    recorded(folder, "ops", "add_0")
    folder.chmod(0o555)
    try:
        result = pytester.runpytest("-p", "no:cacheprovider", "ro")
    finally:
        folder.chmod(0o755)
    result.assert_outcomes(passed=2)
    if not (folder / "ops-run-report.txt").exists():  # root may write anyway
        result.stdout.fnmatch_lines(["*could not write*ops-run-report.txt*"])


def test_html_has_columns_and_extras(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=GOOD + BAD)
    recorded(pytester.path, "ops", "add_0")
    pytester.runpytest("-p", "no:cacheprovider", "--html=report.html", "--self-contained-html")
    page = (pytester.path / "report.html").read_text()
    for column in ("Target", "Stage", "Kind", "Golden", "Computed"):
        assert f'data-column-type=&#34;{column.lower()}&#34;&gt;{column}&lt;/th&gt;' in page or \
            f'data-column-type="{column.lower()}">{column}</th>' in page
    assert "col-kind\\&#34;&gt;compile-error" in page
    assert "col-computed\\&#34;&gt;runtime" in page
    assert "&#34;name&#34;: &#34;snippet&#34;" in page and "&#34;name&#34;: &#34;diagnostics&#34;" in page
    assert "&#34;name&#34;: &#34;golden metrics&#34;" in page


EXPECTING = BAD + GOOD + CHOLESKY.replace("cholesky_0", "cholesky_1")


def test_expectations_round_trip(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=EXPECTING)
    recorded(pytester.path, "ops", "add_0")
    recorded(pytester.path, "ops", "broken_0", inputs=1)  # once fixed
    exp = pytester.path / "expected.txt"
    first = pytester.runpytest("-p", "no:cacheprovider", f"--mlir-expectations={exp}", "--mlir-update-expectations")
    first.assert_outcomes(passed=2, failed=2, skipped=2)
    assert [line for line in exp.read_text().splitlines() if not line.startswith("#")] == [
        "ops.mlir::broken_0[compile] compile-error", "ops.mlir::broken_0[execute] skip",
        "ops.mlir::cholesky_1[compile] compile-error", "ops.mlir::cholesky_1[execute] skip"]
    green = pytester.runpytest("-p", "no:cacheprovider", f"--mlir-expectations={exp}")
    green.assert_outcomes(passed=2, skipped=2, xfailed=2)
    green.stdout.fnmatch_lines(["*all 3 snippet(s) succeeded across 1 file(s)*"])
    # a regression: add_0 no longer compiles
    (pytester.path / "ops.mlir").write_text(EXPECTING.replace("arith.addf %a, %b : tensor<4xf32>",
                                                              "arith.addf %a, %b : tensor<4xi32>"))
    red = pytester.runpytest("-p", "no:cacheprovider", f"--mlir-expectations={exp}")
    red.assert_outcomes(failed=1, skipped=3, xfailed=2)
    # an unexpected pass: broken_0 fixed
    (pytester.path / "ops.mlir").write_text(EXPECTING.replace("tensor<4xi32>", "tensor<4xf32>"))
    xpass = pytester.runpytest("-p", "no:cacheprovider", f"--mlir-expectations={exp}")
    xpass.assert_outcomes(passed=3, failed=1, xfailed=1, skipped=1)
    xpass.stdout.fnmatch_lines(["*[[]XPASS(strict)[]] expected compile-error*"])


def test_expected_crashers_run_only_when_asked_and_a_different_kind_fails(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=CRASHER + GOOD)
    recorded(pytester.path, "ops", "add_0")
    exp = pytester.path / "expected.txt"
    exp.write_text("ops.mlir::wild_load[execute] crash\nops.mlir::add_0[execute] golden-mismatch\n")
    result = pytester.runpytest("-p", "no:cacheprovider", f"--mlir-expectations={exp}", "-rx")
    result.assert_outcomes(passed=2, failed=1, xfailed=1)
    result.stdout.fnmatch_lines(["*XFAIL*wild_load*expected to crash: not run*"])
    result.stdout.fnmatch_lines(["*[[]XPASS(strict)[]] expected golden-mismatch*"])
    asked = pytester.runpytest("-p", "no:cacheprovider", f"--mlir-expectations={exp}", "--mlir-run-crashers")
    asked.assert_outcomes(passed=2, failed=1, xfailed=1)
    exp.write_text("ops.mlir::wild_load[execute] timeout\n")
    other = pytester.runpytest("-p", "no:cacheprovider", f"--mlir-expectations={exp}")
    other.assert_outcomes(passed=3, failed=1)
    other.stdout.fnmatch_lines(["*expected timeout, got crash*"])
    exp.write_text("ops.mlir::wild_load[execute] exploded\n")
    bad = pytester.runpytest("-p", "no:cacheprovider", f"--mlir-expectations={exp}")
    bad.stderr.fnmatch_lines(["*expected.txt:1: expected '<node> <status>'*got 'ops.mlir::wild_load*exploded'*"])


def test_lit_xfail_and_unsupported_lines(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops="// XFAIL: cpu\n" + BAD + "// UNSUPPORTED: cuda, cpu\n" + GOOD
                      + "// XFAIL: ttnn\n" + GOOD.replace("add_0", "add_1") + "// XFAIL: *\n" +
                      GOOD.replace("add_0", "add_2"))
    for function in ("add_1", "add_2"):  # the two that execute
        recorded(pytester.path, "ops", function)
    result = pytester.runpytest("-p", "no:cacheprovider", "-rsxf")
    # XFAIL expects a failure at some stage: add_2's compile passes as usual, its execute is XPASS(strict)
    result.assert_outcomes(passed=3, skipped=3, xfailed=1, failed=1)
    result.stdout.fnmatch_lines(["*UNSUPPORTED: cpu (a line above the function)*"])
    out = result.stdout.str()
    assert "FAILED ops.mlir::add_2[compile]" not in out and "FAILED ops.mlir::add_2[execute]" in out
    assert "[XPASS(strict)] expected any failure" in out


def test_a_partial_run_updates_the_last_full_report_instead_of_replacing_it(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=GOOD + BAD)
    recorded(pytester.path, "ops", "add_0")
    recorded(pytester.path, "ops", "broken_0")  # once fixed: GOOD under its name
    report = pytester.path / "ops-run-report.txt"
    pytester.runpytest().assert_outcomes(passed=2, failed=1, skipped=1)
    assert "updated" not in report.read_text()
    pytester.runpytest("-k", "add_0").assert_outcomes(passed=2)
    text = report.read_text()
    assert "run:      the full run of " in text and "2 not run this time" in text
    rows = {line.split()[0]: line for line in text.splitlines() if line.startswith(("add_0", "broken_0"))}
    assert rows["add_0"].rstrip().endswith(tuple("0123456789")) and "compile-error" in rows["broken_0"]
    assert "failures: 1" in text  # the full run's failure is still there, not this run's
    pytester.makefile(".mlir", ops=GOOD + GOOD.replace("add_0", "broken_0"))  # fixed
    pytester.runpytest("--lf").assert_outcomes(passed=2)
    text = report.read_text()
    assert "failures: 0" in text and "from the partial run of" not in text
    assert all("pass" in line for line in text.splitlines() if line.startswith(("add_0", "broken_0")))
    pytester.runpytest("-p", "no:cacheprovider", "-k", "add_0")  # no cache: this run's own, said partial
    assert "run:      partial" in report.read_text()
    pytester.runpytest()
    assert "updated" not in report.read_text()  # a full run starts afresh
