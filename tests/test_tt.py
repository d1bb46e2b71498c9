"""The ttmetal and ttnn targets, driven through a test double of exactly the tt-mlir
surface the backend uses (tests/data/tt_double), and without tt-mlir at all."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOUBLE = ROOT / "tests" / "data" / "tt_double"
CLI = str(Path(sys.executable).with_name("mlir-snippets"))


def _has_plugin() -> bool:
    """Whether the tt extra (tt-xla's PJRT plugin) is installed: TTIR then says it needs the builder."""
    from pytest_mlir_snippets.worker.targets.tt_pjrt import PluginError, plugin_library

    try:
        plugin_library()
    except PluginError:
        return False
    return True


HAS_PLUGIN = _has_plugin()
NO_BUILDER = ("TTIR and TTNN input go through tt-mlir's builder, which is not here" if HAS_PLUGIN
              else "tt-mlir is not available (missing modules: _ttmlir_runtime")

OPS = """module {
  func.func @add(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = "ttir.add"(%a, %b) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    return %0 : tensor<32x32xf32>
  }
  func.func @l1_overflow(%a: tensor<32x32xf32>) -> tensor<32x32xf32> {
    return %a : tensor<32x32xf32>
  }
  func.func @runtime_error(%a: tensor<32x32xf32>) -> tensor<32x32xf32> {
    return %a : tensor<32x32xf32>
  }
  func.func @after_failure(%a: tensor<32x32xf32>) -> tensor<32x32xf32> {
    return %a : tensor<32x32xf32>
  }
  func.func @low_pcc(%a: tensor<32x32xf32>) -> tensor<32x32xf32> {
    return %a : tensor<32x32xf32>
  }
}
"""


@pytest.fixture
def tt(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The double on PYTHONPATH (the sandbox worker inherits it), a system descriptor,
    and the call log; returns the log's path."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(DOUBLE), os.environ.get("PYTHONPATH")])))
    descriptor = pytester.path / "artifacts" / "system_desc.ttsys"
    descriptor.parent.mkdir()
    descriptor.write_text("descriptor")
    monkeypatch.setenv("SYSTEM_DESC_PATH", str(descriptor))
    log = pytester.path / "calls.jsonl"
    monkeypatch.setenv("TT_DOUBLE_LOG", str(log))
    (pytester.path / "ops.mlir").write_text(OPS)
    return log


def calls(log: Path, name: str | None = None) -> list[dict]:
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    return [e for e in entries if name is None or e["call"] == name]


def test_ttmetal_through_the_double(pytester: pytest.Pytester, run_items, tt: Path) -> None:
    result, props = run_items("--mlir-target=ttmetal")
    kinds = {n.split("::")[1]: p["mlir_kind"] for n, p in props.items()}
    assert kinds == {"add[compile]": "pass", "add[execute]": "pass",
                     "l1_overflow[compile]": "compile-error", "l1_overflow[execute]": "skip",
                     "runtime_error[compile]": "pass", "runtime_error[execute]": "execute-error",
                     "after_failure[compile]": "pass", "after_failure[execute]": "pass",
                     "low_pcc[compile]": "pass", "low_pcc[execute]": "golden-mismatch"}, result.stdout.str()
    compiles = calls(tt, "compile_ttir_module_to_flatbuffer")
    assert {c["target"] for c in compiles} == {"ttmetal"}
    assert {c["system_desc_path"] for c in compiles} == {str(pytester.path / "artifacts" / "system_desc.ttsys")}
    assert calls(tt, "load_mlir_file")[0]["target"] == "ttir"
    # one device, opened once, reopened once after the runtime failure (close, then open)
    sequence = [c["call"] for c in calls(tt) if c["call"] in ("open_mesh_device", "close_mesh_device",
                                                              "execute_fb")]
    failing = next(i for i, c in enumerate(calls(tt, "execute_fb")) if c["function"] == "runtime_error")
    assert sequence.count("open_mesh_device") == 2
    assert sequence[sequence.index("execute_fb") + failing + 1: sequence.index("execute_fb") + failing + 3] == [
        "close_mesh_device", "open_mesh_device"]
    opened = calls(tt, "open_mesh_device")[0]
    assert opened["mesh_shape"] == [1, 1] and opened["dispatch_core_type"] == "ETH" and opened["runtime"] == "TTMetal"
    assert all(c["device_open"] for c in calls(tt, "execute_fb"))
    executed = calls(tt, "execute_fb")[0]
    assert executed["pcc"] == 0.99 and executed["goldens"] == ["input_0", "output_0"]
    # tt-mlir's words and its golden report, in the item and the run report
    result.stdout.fnmatch_lines(["*tt-mlir compile (ttmetal) failed: TTBuilderCompileException*",
                                 "*required L1 memory usage 2097152 exceeds usable space is 1499136*",
                                 "*tt-mlir runtime failed: TTBuilderRuntimeException: TT_THROW*",
                                 "*golden report: program_0/output_0: PCC 0.500000 < 0.99*"])
    assert json.loads(props["ops.mlir::add[execute]"]["mlir_golden_report"])["program_0"]["output_0"]["0"][
        "actual_pcc"] == 0.999987
    assert float(props["ops.mlir::add[execute]"]["mlir_pcc"]) == 0.999987
    report = (pytester.path / "ops-run-report.txt").read_text()
    assert "golden reports (tt-mlir):" in report and '"actual_pcc": 0.999987' in report
    assert "can't find feasible allocation" in report


def test_options_reach_tt_mlir(pytester: pytest.Pytester, run_items, tt: Path) -> None:
    other = pytester.path / "other.ttsys"
    other.write_text("descriptor")
    run_items("--mlir-target=ttnn", f"--mlir-sys-desc={other}", "--mlir-disable-eth-dispatch", "--mlir-pcc=0.4",
              "--mlir-save-artifacts", "-k", "add or low_pcc")
    assert {c["system_desc_path"] for c in calls(tt, "compile_ttir_module_to_flatbuffer")} == {str(other)}
    assert all(c["save_artifacts"] and "ops_mlir_snippets" in c["artifact_dir"]
               for c in calls(tt, "compile_ttir_module_to_flatbuffer"))
    opened = calls(tt, "open_mesh_device")
    assert len(opened) == 1 and opened[0]["dispatch_core_type"] == "WORKER" and opened[0]["runtime"] == "TTNN"
    assert {c["pcc"] for c in calls(tt, "execute_fb")} == {0.4}


def test_a_missing_system_descriptor_says_where_it_looked(pytester: pytest.Pytester, run_items, tt: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SYSTEM_DESC_PATH")
    result, props = run_items("--mlir-target=ttmetal", "-rs", "-k", "add")
    assert {p["outcome"] for p in props.values()} == {"skipped"}
    result.stdout.fnmatch_lines(["*no system descriptor at ttrt-artifacts/system_desc.ttsys (from the default of "
                                 "`ttrt query --save-artifacts`): run `mlir-snippets sysdesc`*"])


def test_without_tt_mlir_items_skip_and_collection_works(pytester: pytest.Pytester, run_items) -> None:
    (pytester.path / "ops.mlir").write_text(OPS)
    collected = pytester.runpytest("--mlir-target=ttmetal", "--collect-only", "-q", "-p", "no:cacheprovider")
    assert "10 tests collected" in collected.stdout.str()
    result, props = run_items("--mlir-target=ttmetal", "-rs")
    assert {p["outcome"] for p in props.values()} == {"skipped"}
    result.stdout.fnmatch_lines(["*this tt-xla build has no TTMetal (D2M) pipeline*" if HAS_PLUGIN else
                                 "*tt-mlir is not available (missing modules: _ttmlir_runtime, "
                                 "builder.base.builder_apis, builder.base.builder_runtime): run inside a tt-mlir "
                                 "build environment (`source env/activate`*"])


MULTIPLY = """module {
  func.func @multiply(%a: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = "ttir.multiply"(%a, %a) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    return %0 : tensor<32x32xf32>
  }
}
"""


def no_client(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """A system descriptor that is not there: tt-xla's PJRT client, which the ttnn target starts
    with its device where tt-mlir's builder is missing, stops at once instead of starting (a
    few seconds, and libtt's 400 MB of runtime files written); TTIR input never goes to it."""
    monkeypatch.setenv("SYSTEM_DESC_PATH", str(pytester.path / "no-descriptor.ttsys"))


def test_without_tt_mlir_every_item_of_every_file_says_so(pytester: pytest.Pytester, run_items,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    no_client(pytester, monkeypatch)
    (pytester.path / "ops.mlir").write_text(OPS)
    (pytester.path / "more.mlir").write_text(MULTIPLY)
    result, props = run_items("--mlir-target=ttnn")
    assert len(props) == 12 and {p["outcome"] for p in props.values()} == {"skipped"}, result.stdout.str()
    for node, p in props.items():
        assert p["mlir_message"].startswith(NO_BUILDER), node


def test_what_the_machine_lacks_is_not_kept_by_the_compile_cache(pytester: pytest.Pytester,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    no_client(pytester, monkeypatch)  # $SYSTEM_DESC_PATH is not part of the compile key: the runs share theirs
    (pytester.path / "ops.mlir").write_text(MULTIPLY)
    without = pytester.runpytest("--mlir-target=ttnn", "--mlir-skip-exec", "-rs")  # compile cache on
    without.assert_outcomes(skipped=1)
    without.stdout.fnmatch_lines([f"*{NO_BUILDER}*"])
    monkeypatch.delenv("SYSTEM_DESC_PATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(DOUBLE), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("TT_DOUBLE_LOG", str(pytester.path / "calls.jsonl"))
    no_descriptor = pytester.runpytest("--mlir-target=ttnn", "--mlir-skip-exec", "-rs")
    no_descriptor.assert_outcomes(skipped=1)
    no_descriptor.stdout.fnmatch_lines(["*no system descriptor at ttrt-artifacts/system_desc.ttsys*"])
    (pytester.path / "ttrt-artifacts").mkdir()
    (pytester.path / "ttrt-artifacts" / "system_desc.ttsys").write_text("descriptor")  # mlir-snippets sysdesc
    pytester.runpytest("--mlir-target=ttnn", "--mlir-skip-exec").assert_outcomes(passed=1)


def test_sysdesc_runs_ttrt_query(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = pytester.mkdir("bin")
    ttrt = bin_dir / "ttrt"
    ttrt.write_text("#!/bin/sh\n[ \"$1 $2\" = 'query --save-artifacts' ] || exit 3\n"
                    "mkdir -p ttrt-artifacts && echo desc > ttrt-artifacts/system_desc.ttsys\n")
    ttrt.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    result = pytester.run(CLI, "sysdesc")
    assert result.ret == 0, result.stderr.str()
    result.stdout.fnmatch_lines(["wrote */ttrt-artifacts/system_desc.ttsys", "use it: export SYSTEM_DESC_PATH=*"])
    ttrt.unlink()
    missing = pytester.run(CLI, "sysdesc")
    if not HAS_PLUGIN:
        assert missing.ret == 2 and "`ttrt` is not on PATH" in missing.stderr.str()
        return
    assert missing.ret == 0, missing.stderr.str()  # the tt extra's plugin writes it for its mock cluster
    missing.stdout.fnmatch_lines(["wrote */ttrt-artifacts/system_desc.ttsys (tt-xla's PJRT plugin, compile-only*"])
    assert (pytester.path / "ttrt-artifacts" / "system_desc.ttsys").read_bytes()[8:12] == b"TTSY"
