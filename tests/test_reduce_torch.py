"""``mlir-snippets reduce`` on a torch-dialect snippet (issue 43): the op-deletion loop reads
it with torch-mlir's bindings (torch and StableHLO registered) and verifies each edit there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pytest_mlir_snippets.triage.opdeletion import bindings, count_ops, shrink

try:
    from test_iree import needs_iree
except ImportError:  # run from elsewhere
    needs_iree = pytest.mark.skip(reason="tests/test_iree.py not importable")

T = "!torch.vtensor<[4],f32>"
# torch.aten.erfinv has no lowering to linalg: the cpu target's torch legalization fails on it
UNARY = ["relu", "tanh", "sigmoid", "neg", "exp", "abs", "relu", "erfinv", "sin", "cos", "neg", "tanh", "abs",
         "sigmoid", "exp"]


def chain(ops: list[str]) -> str:
    body = "".join(f"  %{i} = torch.aten.{op} {'%arg0' if i == 0 else f'%{i - 1}'} : {T} -> {T}\n"
                   for i, op in enumerate(ops))
    return f"func.func @chain(%arg0: {T}) -> {T} {{\n{body}  return %{len(ops) - 1} : {T}\n}}\n"


def test_the_op_deletion_loop_reads_torch_with_torch_mlirs_bindings() -> None:
    source = chain(UNARY)
    assert bindings(source) is not None and bindings(source).__name__ == "torch_mlir.ir"
    upstream = bindings("func.func @f(%a: f32) -> f32 {\n  %0 = arith.negf %a : f32\n  return %0 : f32\n}\n")
    assert upstream is not None and upstream.__name__ == "mlir.ir"
    assert count_ops(source) == 17  # the function, 15 ops, the return
    small = shrink(source, lambda text: "torch.aten.erfinv" in text and "torch.aten.sin" in text)
    assert count_ops(small) == 4 and "torch.aten.relu" not in small, small  # the function, erfinv, sin, return
    assert "torch.aten.sin %0" in small  # each edit verified: sin takes erfinv's result
    assert shrink(source, lambda text: False) == source  # nothing is interesting: nothing changes
    assert shrink("func.func @f() { %0 = torch.aten.nope }", lambda text: True) == (
        "func.func @f() { %0 = torch.aten.nope }")  # no bindings parse it: written back as it was


@pytest.mark.slow
def test_reduce_shrinks_a_torch_snippet_to_its_failing_op(tmp_path: Path) -> None:
    from pytest_mlir_snippets.triage.interesting import Spec, failure_of, interesting, opened

    source = chain(UNARY[3:12])  # nine ops, erfinv the fifth: every candidate is a compile
    (tmp_path / "ops.mlir").write_text(source)
    done = subprocess.run([sys.executable, "-m", "pytest_mlir_snippets.tools.cli", "reduce", "ops.mlir::chain",
                           "--out", "small.mlir"], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "14 lines, 11 ops before" in done.stdout, done.stdout
    small = (tmp_path / "small.mlir").read_text()
    assert count_ops(small) == 3, small  # the function, erfinv, the return
    assert "torch.aten.erfinv %arg0" in small and "torch.aten.relu" not in small
    # the diagnostic names the op by its SSA values, which move as the snippet shrinks
    spec = Spec("chain", str(tmp_path / "ops.mlir"), 1)
    sandbox = opened(spec)
    try:
        spec.kind, spec.first, spec.compiles = failure_of(sandbox, source, spec, None)
        assert spec.first.startswith("failed to legalize operation 'torch.aten.erfinv': % = "), spec.first
        assert interesting(sandbox, chain(UNARY[5:]), spec, None)
        # sabotaged: another op that fails in another way, and none that fails
        assert not interesting(sandbox, chain([*UNARY[:7], "signbit", *UNARY[8:]]), spec, None)
        assert not interesting(sandbox, chain(UNARY[:7]), spec, None)
    finally:
        sandbox.close()


@needs_iree
@pytest.mark.slow
def test_reduce_shrinks_a_stablehlo_snippet_on_iree_cpu(tmp_path: Path) -> None:
    """IREE has no lowering of ``stablehlo.cholesky``: the candidates run on iree-cpu, read with
    torch-mlir's bindings (StableHLO registered)."""
    kinds = ["abs", "exponential", "negate", "cholesky", "sine", "cosine", "tanh", "abs"]
    shaped = "tensor<4x4xf32>"
    body = "".join(f'  %{i} = "stablehlo.{op}"({"%a" if i == 0 else f"%{i - 1}"})'
                   f'{" {lower = true}" if op == "cholesky" else ""} : ({shaped}) -> {shaped}\n'
                   for i, op in enumerate(kinds))
    source = f"func.func @chain(%a: {shaped}) -> {shaped} {{\n{body}  return %{len(kinds) - 1} : {shaped}\n}}\n"
    assert count_ops(source) == 10  # the function, 8 ops, the return
    (tmp_path / "shlo.mlir").write_text(source)
    done = subprocess.run([sys.executable, "-m", "pytest_mlir_snippets.tools.cli", "reduce", "shlo.mlir::chain",
                           "--target", "iree-cpu"], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    small = (tmp_path / "ops_mlir_snippets/shlo.mlir/chain/iree-cpu/reduced.mlir").read_text()
    assert count_ops(small) == 3, small  # the function, cholesky, the return
    assert '"stablehlo.cholesky"(%arg0)' in small and "stablehlo.tanh" not in small
