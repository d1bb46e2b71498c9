"""``mlir-snippets inventory``: a model's IR as ops.mlir, one function per configuration."""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

import pytest

from pytest_mlir_snippets.tools.inventory import REPORT_FILE, run, take_inventory
from pytest_mlir_snippets.tools.torch_import import export, load_factory

CLI = str(Path(sys.executable).with_name("mlir-snippets"))

MODEL = """module attributes {ttcore.note = "kept"} {
  func.func @main(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %c = "ttir.constant"() <{value = dense<2.0> : tensor<4x8xf32>}> : () -> tensor<4x8xf32>
    %0 = "ttir.add"(%a, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %1 = "ttir.add"(%0, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %2 = "ttir.add"(%1, %c) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %3:2 = "ttir.split"(%2) <{dim = 0 : i32}> : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
    %4 = "ttir.reduce"(%3#0) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      "ttir.yield"(%x) : (tensor<f32>) -> ()
    }) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    return %4, %3#1 : tensor<4x8xf32>, tensor<4x8xf32>
  }
}
"""


def test_configurations_constants_results_and_regions(tmp_path: Path) -> None:
    inventory = take_inventory(MODEL, "model.mlir")
    assert inventory.instances() == Counter({"ttir.add": 3, "ttir.split": 1, "ttir.reduce": 1})
    assert [c.instances for c in inventory.configurations.values()] == [2, 1, 1, 1]  # the 2 adds of inputs: one
    assert inventory.constants == 1
    text = inventory.ops_text
    assert re.findall(r"func\.func @(\w+)", text) == ["add_0", "add_1", "split_0", "reduce_0"]
    add_1 = text.split("@add_1")[1].split("return")[0]
    assert '"ttir.constant"() <{value = dense<2.000000e+00>' in add_1  # the constant operand, inlined
    assert "return %0#0, %0#1" in text  # every result of a multi-result op
    assert '"ttir.yield"' in text  # the region kept
    assert 'attributes {ttcore.note = "kept"}' in text
    assert "// ttir.add: 2 instance(s)" in text


def test_ttir_models_counts_and_collection(tmp_path: Path, pytester: pytest.Pytester, corpus: Path) -> None:
    models = sorted((corpus / "tt-mlir-snippets" / "models").glob("*/*.mlir"))
    written, problems = run(models, tmp_path / "out")
    assert not problems and len(written) == len(models)
    for model, ops in zip(models, written):
        in_model = Counter(re.findall(r'"(ttir\.\w+)"\(', model.read_text()))
        report = (ops.parent / REPORT_FILE).read_text()
        per_op = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(ttir\.\w+)\s+(\d+)", report, re.MULTILINE)}
        assert per_op == {op: n for op, n in in_model.items() if op != "ttir.constant"}, model
    combined = (tmp_path / "out" / REPORT_FILE).read_text()
    assert f"{len(models)} graphs under" in combined
    total = int(re.search(r"total instances:\s+(\d+)", combined).group(1))
    assert total == sum(len(re.findall(r'"ttir\.(?!constant)\w+"\(', m.read_text())) for m in models)
    configurations = int(re.search(r"distinct configurations:\s+(\d+)", combined).group(1))
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider", str(tmp_path / "out"))
    assert f"{2 * configurations} tests collected" in result.stdout.str()


@pytest.mark.slow
def test_stablehlo_corpus_inventory_runs_on_cpu(pytester: pytest.Pytester, run_items, corpus: Path) -> None:
    models = sorted((corpus / "tt-mlir-snippets" / "stablehlo").glob("*.mlir"))
    written, problems = run(models, pytester.path / "out")
    assert not problems
    for model, ops in zip(models, written):
        in_model = Counter(op for op in re.findall(r"(stablehlo\.\w+)", model.read_text())
                           if op not in ("stablehlo.constant", "stablehlo.return"))
        report = (ops.parent / REPORT_FILE).read_text()
        per_op = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(stablehlo\.\w+)\s+(\d+)", report,
                                                                   re.MULTILINE)}
        assert sum(per_op.values()) <= sum(in_model.values()), model  # region ops hold others (reduce bodies)
        assert set(per_op) <= set(in_model)
    result, props = run_items("out", "-n", "0", subprocess=True)
    kinds = Counter(p["mlir_kind"] for n, p in props.items() if n.endswith("[execute]"))
    assert kinds["pass"] >= 25, (kinds, result.stdout.str()[-2000:])  # as the corpus itself: no lowering for 5


TRANSFORMER = """
import torch


def make():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0,
                                             batch_first=True)
    return layer, (torch.randn(1, 4, 8),)
"""


@pytest.fixture(scope="module")
def transformer_ir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The transformer's IR as import-torch exports it, in this process. A module fixture: set
    up before any test's pytester, whose teardown unloads the modules imported meanwhile
    (torch._dynamo's, which cannot be imported twice)."""
    model = tmp_path_factory.mktemp("transformer") / "model.py"
    model.write_text(TRANSFORMER)
    return str(export(load_factory(f"{model}:make")[0])[0])


@pytest.mark.slow
def test_inventory_of_a_pytorch_transformer_runs_on_cpu(pytester: pytest.Pytester, run_items,
                                                        transformer_ir: str) -> None:
    pytester.makepyfile(model=TRANSFORMER)
    result = pytester.run(CLI, "inventory", "--from-torch", "model.py:make", "--out", "inv")
    assert result.ret == 0, result.stderr.str()
    report = (pytester.path / "inv" / REPORT_FILE).read_text()
    assert "linalg.batch_matmul" in report and "not extracted (destinations, calls): tensor.empty" in report
    configurations = int(re.search(r"distinct configurations:\s+(\d+)", report).group(1))
    # the counts against the model's own IR (import-torch's export), counted by its text: ops at the
    # function body's indentation, not those inside linalg.generic bodies
    in_model = Counter(re.findall(r"^    (?:%\S+ = )?((?:linalg|tensor)\.\w+)", transformer_ir, re.MULTILINE))
    per_op = {m.group(1): int(m.group(2)) for m in re.finditer(r"^((?:linalg|tensor)\.\w+)\s+(\d+)", report,
                                                               re.MULTILINE)}
    assert per_op == {op: n for op, n in in_model.items() if op != "tensor.empty"}
    assert f"tensor.empty x{in_model['tensor.empty']}" in report
    # every function compiles; a fixed sample executes (each op's first two functions, weights
    # inlined as constants among them): an execute is a second compiler's run, ~1 s each
    functions = re.findall(r"func\.func @(\w+)\(", (pytester.path / "inv" / "ops.mlir").read_text())
    sample = [f for f in functions if re.fullmatch(r"\w+_[01]", f)]
    assert len(functions) == configurations and len(sample) >= 12
    collected = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider", "inv/ops.mlir")
    assert f"{2 * configurations} tests collected" in collected.stdout.str()
    result, props = run_items(*(f"inv/ops.mlir::{f}" if f in sample else f"inv/ops.mlir::{f}[compile]"
                                for f in functions))
    assert len(props) == configurations + len(sample)
    assert {n for n in props if n.endswith("[execute]")} == {f"ops.mlir::{f}[execute]" for f in sample}
    failed = {n: p["mlir_kind"] for n, p in props.items() if p["mlir_kind"] != "pass"}
    assert not failed, result.stdout.str()[-3000:]


def test_a_model_that_does_not_parse_keeps_mlir_diagnostics(pytester: pytest.Pytester) -> None:
    (pytester.path / "bad.mlir").write_text(MODEL.replace("(%0, %b)", "(%0, %missing)"))
    (pytester.path / "mistyped.mlir").write_text(
        "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %0 = arith.addf %a, %a : tensor<4xi32>\n  return %0 : tensor<4xf32>\n}\n")
    (pytester.path / "good.mlir").write_text(MODEL)
    result = pytester.run(CLI, "inventory", "bad.mlir", "mistyped.mlir", "good.mlir")
    assert result.ret == 1
    assert result.stderr.lines == [
        "bad.mlir: cannot take the inventory: MLIR cannot parse it",
        "bad.mlir:5:25: error: use of undeclared SSA value name",
        "mistyped.mlir: cannot take the inventory: MLIR cannot parse it",
        "mistyped.mlir:2:19: error: use of value '%a' expects different type than prior uses: "
        "'tensor<4xi32>' vs 'tensor<4xf32>'",
        "  mistyped.mlir:1:14: note: prior use here"], result.stderr.str()
    result.stdout.fnmatch_lines(["wrote good/ops.mlir and op-report.txt"])
