"""Collection: node ids, order, bad input, and the tt-mlir corpus without tt-mlir."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_mlir_snippets.mlirtext.splitter import SnippetSource

ADD = """func.func @add_0(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @matmul_0(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32> {
  %e = tensor.empty() : tensor<2x2xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x2xf32>) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
"""


def collected(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "::" in line and not line.startswith(("FAILED", "ERROR"))]


def test_node_ids_in_file_order(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=ADD)
    result = pytester.runpytest("--collect-only", "-q", "ops.mlir")
    assert collected(result) == ["ops.mlir::add_0[compile]", "ops.mlir::add_0[execute]",
                                 "ops.mlir::matmul_0[compile]", "ops.mlir::matmul_0[execute]"]
    assert sorted(p.name for p in pytester.path.iterdir()) == ["ops.mlir"]  # collecting writes nothing


def test_collection_imports_neither_mlir_nor_numpy(pytester: pytest.Pytester) -> None:
    """The pytest process only collects and reports: MLIR and numpy load in the worker
    (numpy alone took ~0.2 s of a 0.5 s `--collect-only`)."""
    pytester.makefile(".mlir", ops=ADD)
    run = pytester.mkdir("run")
    (run / "model_linalg.mlir").write_text(ADD)
    (run / "v0").mkdir()
    pytester.makeconftest("""
import sys

def pytest_collection_finish(session):
    print("LOADED", [name for name in ("numpy", "mlir", "torch") if name in sys.modules])
""")
    result = pytester.runpytest_subprocess("--collect-only", "-q", "-s")
    assert "run/model_linalg.mlir::v0[contract]" in result.stdout.str()
    result.stdout.fnmatch_lines(["LOADED []"])


def test_k_selects_both_items_of_a_function(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=ADD)
    result = pytester.runpytest("--collect-only", "-q", "-k", "add_0")
    assert collected(result) == ["ops.mlir::add_0[compile]", "ops.mlir::add_0[execute]"]
    result = pytester.runpytest("--collect-only", "-q", "-k", "compile and not matmul")
    assert collected(result) == ["ops.mlir::add_0[compile]"]


@pytest.mark.parametrize("keyword", ["op", "line", "name", "uid", "scope", "comments", "duplicate_of"])
def test_k_matches_no_internal_attribute(pytester: pytest.Pytester, keyword: str) -> None:
    """-k matches node id parts and markers only: no field of the parsed function leaks in."""
    pytester.makefile(".mlir", sample=ADD)
    result = pytester.runpytest("--collect-only", "-q", "-k", keyword)
    assert collected(result) == []
    result = pytester.runpytest("--collect-only", "-q", "-k", "mat")
    assert collected(result) == ["sample.mlir::matmul_0[compile]", "sample.mlir::matmul_0[execute]"]


def test_skip_exec_collects_compile_items_only(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", ops=ADD)
    result = pytester.runpytest("--collect-only", "-q", "--mlir-skip-exec")
    assert collected(result) == ["ops.mlir::add_0[compile]", "ops.mlir::matmul_0[compile]"]


def test_ini_selects_files_in_directories(pytester: pytest.Pytester) -> None:
    sub = pytester.mkdir("sub")
    (sub / "ops.mlir").write_text(ADD)
    (sub / "preprocessed.mlir").write_text(ADD)
    (sub / "other.mlirbc.mlir").write_text(ADD)
    pytester.makeini("[pytest]\nmlir_ignore_files = preprocessed.mlir other.mlirbc.mlir\n")
    result = pytester.runpytest("--collect-only", "-q", "sub")
    assert {line.split("::")[0] for line in collected(result)} == {"sub/ops.mlir"}
    # a file named on the command line is always collected
    result = pytester.runpytest("--collect-only", "-q", "sub/preprocessed.mlir")
    assert len(collected(result)) == 4


@pytest.mark.parametrize(("content", "message"), [
    (b"", "the file is empty"),
    (b"\x00\x01\x02\xff binary", "not UTF-8"),
    ("func.func @f() {\n  return\n}\n// caf\xe9".encode("latin-1"), "line 4: the file is not UTF-8"),
    (b"func.func private @decl(i32) -> i32\n", "no public func.func definition"),
    (b"func.func @f() {\n  return\n", "is never closed"),
])
def test_bad_files_fail_one_item_and_the_run_goes_on(pytester: pytest.Pytester, content: bytes,
                                                      message: str) -> None:
    (pytester.path / "bad.mlir").write_bytes(content)
    pytester.makefile(".mlir", good=ADD)
    result = pytester.runpytest("--mlir-skip-exec", "-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*FAILED bad.mlir::<file>*"])
    assert message in result.stdout.str()
    # headed by the file and what went wrong, counted as a file error, not as a failed snippet
    result.stdout.fnmatch_lines(["_* bad.mlir: file error (not split into snippets) _*",
                                 "1 file error(s) (file(s) that cannot be split into snippets) across 2 file(s)"])
    assert "____ <file> ____" not in result.stdout.str() and "snippet(s) failed" not in result.stdout.str()
    assert "snippets: 0 (0 succeeded, 0 failed, 0 unsupported); 1 file error(s)" in (
        pytester.path / "bad-run-report.txt").read_text()


def test_duplicate_names_fail_only_the_duplicate(pytester: pytest.Pytester) -> None:
    pytester.makefile(".mlir", dup="func.func @f() { return }\nfunc.func @f() { return }\n")
    result = pytester.runpytest("--mlir-skip-exec", "-q")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*redefinition of symbol named 'f' (first defined at line 1)*"])


def public_definitions(path: Path) -> int:
    return len(SnippetSource(path.read_text()).functions)


@pytest.mark.slow
def test_tt_mlir_corpus_collects_without_tt_mlir(pytester: pytest.Pytester, corpus: Path) -> None:
    snippets = corpus / "tt-mlir-snippets"
    pytest.importorskip("pytest_mlir_snippets")
    assert not _importable("ttmlir") and not _importable("ttrt")
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider", str(snippets))
    assert result.ret == 0, result.stdout.str()[-2000:]
    ids = collected(result)
    files = sorted(snippets.rglob("*.mlir"))
    expected = sum(public_definitions(f) for f in files)
    assert expected > 100
    assert len(ids) == 2 * expected
    per_file: dict[str, int] = {}
    for node in ids:
        per_file[node.split("::")[0]] = per_file.get(node.split("::")[0], 0) + 1
    assert len(per_file) == len(files)  # every file has items, none failed to collect
    assert all(re.fullmatch(r".+::.+\[(compile|execute)\]", node) for node in ids)


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None
