"""Option values: checked before anything runs, one line and exit 4 when unusable."""

from __future__ import annotations

import pytest

ADD = """func.func @add_0(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


@pytest.mark.parametrize(("args", "words"), [
    (["--mlir-timeout", "-5"], "--mlir-timeout: -5.0 must be positive"),
    (["--mlir-timeout", "0"], "--mlir-timeout: 0.0 must be positive"),
    (["--mlir-devices", "a,b"], "--mlir-devices: 'a,b' must be device numbers"),
    (["--mlir-pcc", "2"], "--mlir-pcc: 2.0 must lie between -1 and 1"),
    (["--mlir-atol", "-1"], "--mlir-atol: -1.0 must not be negative"),
    (["--mlir-bench-time", "0"], "--mlir-bench-time: 0.0 must be positive"),
    (["--mlir-bisect-timeout", "0"], "--mlir-bisect-timeout: 0.0 must be positive"),
    (["-o", "mlir_bisect=maybe"], "mlir_bisect (ini): invalid truth value 'maybe' (true or false)"),
    (["--mlir-memory-limit", "lots"], "--mlir-memory-limit: cannot read 'lots'"),
    (["--mlir-target", "cuda", "--mlir-cuda-chip", "ampere"], "--mlir-cuda-chip: 'ampere' is not a CUDA chip"),
    (["-o", "mlir_strict=maybe"], "mlir_strict (ini): invalid truth value 'maybe' (true or false)"),
    (["-o", "mlir_timeout=soon"], "mlir_timeout (ini): 'soon' is not a number"),
    (["-o", "mlir_target=gpu"], "mlir_target (ini): 'gpu' is not one of cpu, cuda"),
    (["-o", "mlir_opt_level=7"], "mlir_opt_level (ini): '7' is not one of 0, 1, 2, 3"),
    # a pipeline MLIR cannot parse: checked once in a sandbox worker, before any item runs
    (["--mlir-pipeline", "builtin.module(canonicalise, cse)"],
     "'canonicalise' is not a registered pass (nearest: canonicalize"),
    (["-o", "mlir_pipeline=builtin.module(func.func(convert-linalg-to-loop))"],
     "'convert-linalg-to-loop' is not a registered pass (nearest: convert-linalg-to-loops"),
    (["--mlir-target", "cuda", "--mlir-pipeline", "builtin.module(not-a-pass)"], "'not-a-pass' is not a registered"),
])
def test_bad_values_are_one_line_usage_errors(pytester: pytest.Pytester, args: list[str], words: str) -> None:
    pytester.makefile(".mlir", ops=ADD)
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.errlines if line.strip()]
    assert len(errors) == 1 and words in errors[0], result.errlines
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_snippets_get_a_minute_and_optimization_runs_what_they_need(pytester: pytest.Pytester) -> None:
    """Default --mlir-timeout: 60 s per call of a snippet item; optimization-run items (a
    whole model compiled and benchmarked) 600 s unless --mlir-timeout is given."""
    pytester.makefile(".mlir", ops=ADD)
    run = pytester.mkdir("run")
    (run / "model_linalg.mlir").write_text(ADD)
    (run / "v0").mkdir()
    pytester.makeconftest("""
def pytest_collection_finish(session):
    for item in session.items:
        print("LIMIT", item.nodeid, item.timeout())
""")
    result = pytester.runpytest("--collect-only", "-q", "-s")
    result.stdout.fnmatch_lines(["LIMIT ops.mlir::add_0[compile] 60.0",
                                 "LIMIT run/model_linalg.mlir::v0[benchmark] 600.0"])
    result = pytester.runpytest("--collect-only", "-q", "-s", "--mlir-timeout", "5")
    result.stdout.fnmatch_lines(["LIMIT ops.mlir::add_0[compile] 5.0",
                                 "LIMIT run/model_linalg.mlir::v0[benchmark] 5.0"])
    assert "(default 60;" in pytester.runpytest("--help").stdout.str()


def test_a_missing_expectations_file_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=ADD)
    result = pytester.runpytest("--mlir-expectations", str(pytester.path / "nope.txt"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "nope.txt does not exist (--mlir-update-expectations creates it" in result.stderr.str()


def test_an_update_creates_a_missing_file_in_the_form_its_name_implies(pytester: pytest.Pytester) -> None:
    import json

    pytester.makefile(".mlir", empty="")  # one failing <file> item, no sandbox worker needed
    lines, config = pytester.path / "new.txt", pytester.path / "configs" / "new_cpu.json"
    for path in (lines, config):
        result = pytester.runpytest("-p", "no:cacheprovider", "--mlir-expectations", str(path),
                                    "--mlir-update-expectations")
        assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stderr.str()
    assert lines.read_text().splitlines()[-1] == "empty.mlir::<file> compile-error"
    data = json.loads(config.read_text())
    assert data["config_name"] == "new_cpu" and data["expected_compile_failures"] == []
    assert data["iree_compile_flags"] == [] and data["iree_run_module_flags"] == []


def test_a_pipeline_that_parsed_is_not_parsed_again(pytester: pytest.Pytester,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A pipeline that parsed is kept in the compile cache: the next run starts no worker to
    parse it; one that does not parse is checked, and refused, every time."""
    from pytest_mlir_snippets.client import Sandbox

    asked: list[str] = []
    check = Sandbox.check_pipeline
    monkeypatch.setattr(Sandbox, "check_pipeline", lambda self, pipeline, timeout=None: asked.append(pipeline)
                        or check(self, pipeline, timeout))
    pytester.makefile(".mlir", ops=ADD)
    good, bad = "builtin.module(canonicalize)", "builtin.module(canonicalise)"
    for _ in range(2):
        assert pytester.runpytest_inprocess("--collect-only", "-q", "--mlir-pipeline", good).ret == pytest.ExitCode.OK
    assert asked == [good]
    for _ in range(2):
        result = pytester.runpytest_inprocess("--collect-only", "-q", "--mlir-pipeline", bad)
        assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert asked == [good, bad, bad]
    result = pytester.runpytest_inprocess("--collect-only", "-q", "--mlir-pipeline", good, "--mlir-no-cache")
    assert result.ret == pytest.ExitCode.OK and asked[-1] == good  # without the cache: parsed again
