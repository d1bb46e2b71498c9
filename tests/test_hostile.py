"""The hostile suite: every kind of bad snippet and bad file, healthy ones between.

Each item must get the kind in ``data/hostile/expected.txt``; the run must end
normally, with and without xdist, and write nothing outside the output root.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from conftest import copy_inputs

from test_run import recorded

HOSTILE = Path(__file__).parent / "data" / "hostile"


def expected_kinds() -> dict[str, str]:
    kinds = {}
    for line in (HOSTILE / "expected.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            node, kind = line.rsplit(" ", 1)
            kinds[node] = kind
    return kinds


def write_generated(folder: Path) -> None:
    """The hostile files too big or too odd to keep in the repository."""
    chain = ["func.func @slow_compile(%a: tensor<64xf32>) -> tensor<64xf32> {"]
    chain += [f"  %v{i} = arith.addf {'%a' if i == 0 else f'%v{i - 1}'}, %a : tensor<64xf32>" for i in range(6000)]
    chain += ["  return %v5999 : tensor<64xf32>", "}", ""]
    (folder / "slow_compile.mlir").write_text("\n".join(chain))
    n = 1_250_000  # 5 MB of f32, 10 MB as hex text: past the 1 MiB over which a snippet gets a context of its own
    blob = (np.arange(n) % 7).astype(np.float32).tobytes().hex().upper()
    (folder / "big.mlir").write_text(
        "func.func @big_constant(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        f'  %c = arith.constant dense<"0x{blob}"> : tensor<{n}xf32>\n'
        f"  %s = tensor.extract_slice %c[3] [4] [1] : tensor<{n}xf32> to tensor<4xf32>\n"
        "  %0 = arith.addf %s, %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n")
    (folder / "empty.mlir").write_bytes(b"")
    (folder / "garbage.mlir").write_bytes(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    (folder / "latin1.mlir").write_bytes("// Größe\nfunc.func @f() { return }\n".encode("latin-1"))


@pytest.fixture
def hostile(pytester: pytest.Pytester) -> Path:
    folder = pytester.path / "hostile"
    copy_inputs(HOSTILE, folder)
    write_generated(folder)
    return folder


def files_under(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


@pytest.mark.slow
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_hostile_suite(pytester: pytest.Pytester, run_items, hostile: Path, workers: list[str]) -> None:
    before = files_under(pytester.path)
    root = pytester.path / "artifacts"
    result, props = run_items("hostile", "--mlir-memory-limit", "4G", "--mlir-save-artifacts",
                              f"--mlir-output-root={root}", *workers, subprocess=True)
    got = {node: p.get("mlir_kind", p["outcome"]) for node, p in props.items()}
    want = expected_kinds()
    assert got == want, result.stdout.str()[-4000:]
    out = result.stdout.str()
    assert "Interrupted" not in out and "INTERNALERROR" not in out
    result.stdout.fnmatch_lines(["*8 snippet(s) failed; 3 file error(s) (file(s) that cannot be split into snippets) "
                                 "across 10 file(s)*"])
    for node, p in props.items():  # healthy snippets are all there, and right
        if "healthy" in node and node.endswith("[execute]"):
            assert p["mlir_kind"] == "pass" and float(p["mlir_pcc"]) > 0.99, node
    assert "runtime.mlir:8) [execute]\nthe sandbox worker killed by SIGSEGV" in out  # wild_load
    onnx = props["onnx_castlike_ui16.mlir::castlike_ui16[compile]"]
    assert "LLVM ERROR: Unhandled type in getScalarTypeForType: ui16" in onnx["mlir_diagnostics"]
    assert "killed by SIGFPE" in out  # view_zero
    assert re.search(r"no answer within (2|[01](\.\d+)?) s", out)  # pytest-timeout's 2 s, the item's budget
    new = {p for p in files_under(pytester.path) - before if "__pycache__" not in p} - {"junit.xml", "stdout", "stderr"}
    reports = {f"hostile/{p.stem}-run-report.txt" for p in hostile.glob("*.mlir")}
    reports.add("hostile/mlir-snippets-combined-report.txt")
    outside = sorted(p for p in new if not p.startswith("artifacts/ops_mlir_snippets/") and p not in reports)
    assert not outside
    assert any("escape" in path for path in new)


def test_ten_thousand_functions_collect_and_run_selected(pytester: pytest.Pytester) -> None:
    template = ("func.func @op_{}(%a: tensor<4xf32>) -> tensor<4xf32> {{\n"
                "  %0 = arith.addf %a, %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}}\n")
    body = "".join(template.format(i) for i in range(10_000))
    pytester.makefile(".mlir", many=body)
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["many.mlir::op_0[[]compile[]]", "*20000 tests collected*"])
    recorded(pytester.path, "many", "op_0", "op_5000", "op_9999", inputs=1)  # their golden: no second compiler
    selected = pytester.runpytest("-p", "no:cacheprovider", "-k", "op_0 or op_5000 or op_9999")
    selected.assert_outcomes(passed=6)


def test_worker_crash_under_xdist_is_a_crash_with_the_worker_name(pytester: pytest.Pytester, run_items) -> None:
    pytester.makeconftest("""
import os
def pytest_runtest_call(item):
    if "die_here" in item.name and hasattr(item.config, "workerinput"):
        os._exit(3)
""")
    healthy = "func.func @{}(%a: tensor<4xf32>) -> tensor<4xf32> {{\n  return %a : tensor<4xf32>\n}}\n"
    pytester.makefile(".mlir", ops="".join(healthy.format(n) for n in ("a", "die_here", "b", "c")))
    x = np.arange(4, dtype=np.float32)
    for name in ("a", "b", "c"):  # their golden: no second compiler started
        np.savez(pytester.path / f"ops.{name}.npz", input_0=x, output_0=x)
    result, props = run_items("-n", "2", "--html=report.html", "--self-contained-html", subprocess=True)
    assert result.ret == 1
    out = result.stdout.str()
    assert "crashed while running 'ops.mlir::die_here[compile]'" in out
    assert "items per outcome: crash 2, pass 6" in out
    assert {n for n, p in props.items() if p["outcome"] == "passed"} == {
        f"ops.mlir::{n}[{s}]" for n in ("a", "b", "c") for s in ("compile", "execute")}
    assert props["ops.mlir::die_here[compile]"]["mlir_kind"] == "crash"  # junit has the lost items
    page = (pytester.path / "report.html").read_text()  # and so has pytest-html, as rows
    assert page.count("col-kind\\&#34;&gt;crash&lt;") == 2 and "ops.mlir::die_here[execute]" in page
