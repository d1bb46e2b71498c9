"""iree-test-suites' config JSON as an expectations file: names, skips, flags, and the
file written back (pure: no IREE needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_mlir_snippets.items.expectfile import ExpectationsError, load_expectations
from pytest_mlir_snippets.items.ireeconfig import IreeConfig
from pytest_mlir_snippets.model.record import ItemRecord
from pytest_mlir_snippets.protocol import Stage

CONFIG = {
    "config_name": "cpu_llvm_sync",
    "iree_compile_flags": ["--iree-hal-target-backends=llvm-cpu"],
    "iree_run_module_flags": ["--device=local-sync"],
    "skip_compile_tests": ["onnx/node/generated/test_skip_all"],
    "skip_run_tests": ["onnx/node/generated/test_skip_run"],
    "expected_compile_failures": ["onnx/node/generated/test_compile_fails"],
    "expected_run_failures": ["onnx/node/generated/test_run_fails"],
    "extra_key": {"kept": True},
}


def suite(tmp_path: Path, tests: list[str], config: dict[str, object] | None = None) -> Path:
    """An iree-test-suites layout: onnx_ops/configs/cfg.json, onnx_ops/onnx/node/generated/<test>/model.mlir."""
    root = tmp_path / "onnx_ops"
    for name in tests:
        folder = root / "onnx" / "node" / "generated" / name
        folder.mkdir(parents=True)
        (folder / "model.mlir").write_text(f"func.func @{name}() {{ return }}\n")
        (folder / "run_module_io_flags.txt").write_text("")
    (root / "configs").mkdir(parents=True)
    path = root / "configs" / "cfg.json"
    path.write_text(json.dumps(config or CONFIG, indent=2))
    return path


def model(config: Path, name: str) -> Path:
    return config.parent.parent / "onnx" / "node" / "generated" / name / "model.mlir"


def test_expected_failures_are_any_failure_of_their_stage_and_skips_skip(tmp_path: Path) -> None:
    path = suite(tmp_path, ["test_compile_fails", "test_run_fails", "test_skip_all", "test_skip_run", "test_ok"])
    config = load_expectations(path)
    assert isinstance(config, IreeConfig)
    assert config.compile_flags == ["--iree-hal-target-backends=llvm-cpu"]
    assert config.run_flags == ["--device=local-sync"]
    fails = model(path, "test_compile_fails")
    assert config.status_of(fails, "test_compile_fails[compile]", Stage.COMPILE) == "fail"
    assert config.status_of(fails, "test_compile_fails[execute]", Stage.EXECUTE) is None
    runs = model(path, "test_run_fails")
    assert config.status_of(runs, "test_run_fails[compile]", Stage.COMPILE) is None
    assert config.status_of(runs, "test_run_fails[execute]", Stage.EXECUTE) == "fail"
    assert config.skip_reason(model(path, "test_skip_all"), "test_skip_all[compile]", Stage.COMPILE) == \
        "skip_compile_tests in cfg.json"
    assert config.skip_reason(model(path, "test_skip_run"), "test_skip_run[compile]", Stage.COMPILE) is None
    assert config.skip_reason(model(path, "test_skip_run"), "test_skip_run[execute]", Stage.EXECUTE) == \
        "skip_run_tests in cfg.json"
    assert config.status_of(model(path, "test_ok"), "test_ok[execute]", Stage.EXECUTE) is None
    assert "expected_compile_failures in cfg.json" in config.reason("compile")


def test_a_flat_copy_matches_the_suites_names(tmp_path: Path) -> None:
    """IREE's names carry the suite's folders; a flat copy of the tests matches them by suffix."""
    (tmp_path / "test_compile_fails").mkdir()
    (tmp_path / "test_compile_fails" / "model.mlir").write_text("")
    path = tmp_path / "cfg.json"
    path.write_text(json.dumps(CONFIG))
    config = IreeConfig.load(path)
    assert config.status_of(tmp_path / "test_compile_fails" / "model.mlir", "test_compile_fails[compile]",
                            Stage.COMPILE) == "fail"
    assert config.status_of(tmp_path / "other" / "model.mlir", "x[compile]", Stage.COMPILE) is None


def record(config: Path, name: str, stage: str, kind: str) -> ItemRecord:
    file = model(config, name).relative_to(config.parent.parent.parent).as_posix()
    return ItemRecord(nodeid=f"{file}::{name}[{stage}]", name=f"{name}[{stage}]", file=file, function=name,
                      stage=stage, target="iree-cpu", kind=kind)


def test_update_writes_both_lists_and_keeps_the_rest(tmp_path: Path) -> None:
    path = suite(tmp_path, ["test_compile_fails", "test_run_fails", "test_new_compile", "test_new_run", "test_ok"])
    config = IreeConfig.load(path)
    records = [
        record(path, "test_compile_fails", "compile", "pass"),  # fixed: leaves the list
        record(path, "test_compile_fails", "execute", "pass"),
        record(path, "test_run_fails", "compile", "pass"),
        record(path, "test_run_fails", "execute", "skip"),  # not decided: stays
        record(path, "test_new_compile", "compile", "compile-error"),
        record(path, "test_new_compile", "execute", "skip"),
        record(path, "test_new_run", "compile", "pass"),
        record(path, "test_new_run", "execute", "golden-mismatch"),
        record(path, "test_ok", "compile", "pass"),
    ]
    config.update(records, tmp_path)
    written = json.loads(path.read_text())
    assert written["expected_compile_failures"] == ["onnx/node/generated/test_new_compile"]
    assert written["expected_run_failures"] == ["onnx/node/generated/test_new_run",
                                                "onnx/node/generated/test_run_fails"]
    assert written["extra_key"] == {"kept": True} and list(written)[:3] == ["config_name", "iree_compile_flags",
                                                                          "iree_run_module_flags"]
    assert written["skip_compile_tests"] == CONFIG["skip_compile_tests"]


def test_a_config_without_the_required_fields_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "cfg.json"
    path.write_text(json.dumps({"config_name": "x", "iree_compile_flags": []}))
    with pytest.raises(ExpectationsError, match="missing a 'iree_run_module_flags' field"):
        load_expectations(path)
    path.write_text("{not json")
    with pytest.raises(ExpectationsError, match="not an IREE config JSON"):
        load_expectations(path)


def test_json5_comments_and_trailing_commas_are_read(tmp_path: Path) -> None:
    path = tmp_path / "cfg.json"
    path.write_text('{\n  // IREE reads its configs with pyjson5\n  "config_name": "x", "iree_compile_flags": [],\n'
                    '  "iree_run_module_flags": ["--device=local-task",], /* trailing */\n}\n')
    assert IreeConfig.load(path).run_flags == ["--device=local-task"]


MIXED_GOOD = """func.func @add_0(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
MIXED_BAD = """func.func @broken_0(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xi32>
  return %0 : tensor<4xf32>
}
"""


def test_an_update_of_a_json_config_makes_the_rerun_green_whatever_the_items(pytester: pytest.Pytester) -> None:
    """Snippet items have no place in IREE's lists: they go under the plugin's own key."""
    pytester.makefile(".mlir", good=MIXED_GOOD, bad=MIXED_BAD)
    first = pytester.runpytest("-p", "no:cacheprovider", "--mlir-expectations", "exp.json",
                               "--mlir-update-expectations")
    first.assert_outcomes(passed=2, failed=1, skipped=1)
    data = json.loads((pytester.path / "exp.json").read_text())
    assert data["expected_compile_failures"] == data["expected_run_failures"] == []
    assert data["pytest_mlir_snippets"] == {"bad.mlir::broken_0[compile]": "compile-error",
                                            "bad.mlir::broken_0[execute]": "skip"}
    again = pytester.runpytest("-p", "no:cacheprovider", "--mlir-expectations", "exp.json")
    assert again.ret == 0
    again.assert_outcomes(passed=2, xfailed=1, skipped=1)
    (pytester.path / "bad.mlir").write_text(MIXED_GOOD.replace("add_0", "broken_0"))  # fixed: strict XPASS fails
    assert pytester.runpytest("-p", "no:cacheprovider", "--mlir-expectations", "exp.json").ret == 1
