"""ONNX's node test suite (onnx 1.23's ``onnx.backend.test.case.node``) on the cpu target.

    python scripts/onnx_node.py [--workers 2] [-k PATTERN]

The cases are written as snippet folders with their recorded data (``mlir-snippets
onnx-tests --write``: the layout of IREE's ONNX tests) into a temporary folder and run
with ``pytest -n WORKERS --mlir-json``; a case that could not be written (torch-mlir's
importer rejects it, a sequence or string value) counts as failing. The cases no compiler
can match (random outputs, string tensors, ImageDecoder) are left out of the suite and
listed. Prints a markdown section; ``conformance.py`` includes it in docs/conformance.md.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from pytest_mlir_snippets.onnx_backend.write import write_cases  # noqa: E402

TITLE = "ONNX's node test suite (onnx 1.23, node cases on cpu)"
# why a group of cases fails (by name); the first pattern that matches
WHY = [
    (r"test_cast(like)?_.*(FLOAT8|INT4|UINT4|FLOAT4|INT2|UINT2|E8M0)", "f8, 4-bit and 2-bit element types: the "
     "importer does not know 2-bit, f4 and e8m0 types; the cpu target cannot feed or read f8 and 4-bit tensors"),
    (r"test_(de)?quantizelinear_.*(float8|e4m3|e5m2|int4|uint4|int2|uint2|float4)", "f8, 4-bit and 2-bit quantized "
     "types (as the casts)"),
    (r"test_(sequence|split_to_sequence|identity_sequence|identity_opt|optional|if_seq|if_opt|loop1[36]_seq)",
     "sequences and optionals: values the recorded layout (and the cpu target's calling convention) cannot hold"),
    (r"test_equal_string", "string tensors (Equal on strings)"),
    (r"test_(shape|size|constant|constantofshape|reduce_.*empty_set|cum(sum|prod)_1d_int32_exclusive)",
     "outputs computed at compile time (no input, or only its shape, or an empty reduction): the plugin's verdict "
     "is a skip (the constant folder was checked, not code generation), in ONNX's harness too"),
    (r"test_ai_onnx_ml_tree_ensemble", "TreeEnsemble (ai.onnx.ml): torch-mlir has no conversion and the plugin "
     "no expansion (the domain's Binarizer and ArrayFeatureExtractor, and the training optimizers, are expanded)"),
    (r"test_attention_.*fp16", "Attention in fp16 with a causal mask: 2 of 192 values one or two fp16 ulps off "
     "the reference's (rtol 1e-3 is one to two ulps of fp16 there); accumulating its MatMuls in f32 changes none"),
    (r"test_unique", "Unique: onnx 1.23's models leave its data-dependent result shapes unknown ([?]); the plugin's "
     "expansion needs them static (IREE's recorded tests have them), torch-mlir's conversion fails"),
    (r"test_affine_grid_.*expanded", "its Ifs fold and are inlined, but the import typed the values after them "
     "rank 0: it needs ONNX shape inference over the folded values"),
    (r"test_range_(bfloat16|float16).*expanded", "Range in f16/bf16, its function body: a Loop whose trip count "
     "is known only at run time (the op itself passes, computed in f32)"),
    (r"test_averagepool_3d_dilations_large_count_include_pad_is_1_ceil_mode", "AveragePool with ceil_mode and "
     "count_include_pad: onnx 1.17 and 1.23 give the same model (AveragePool-22, IR 10) different outputs (1.18 "
     "changed the reference's divisor, not the op's version), so nothing in the model tells them apart; the "
     "expansion follows 1.17, as IREE's recorded test does"),
    (r"test_dft_inverse", "DFT's inverse: the reference's own float32 round-off (1.9e-7 where the exact value, "
     "which the expansion's float64 coefficients give within 3e-15, is 0) is over the case's atol 1e-7"),
    (r"test_bitcast", "BitCast (opset 26): torch-mlir has no conversion"),
    (r"test_cumprod", "CumProd (opset 26): torch-mlir has no conversion"),
    (r"test_tensorscatter", "TensorScatter (opset 24): torch-mlir has no conversion"),
    (r"test_(simple_rnn|rnn|gru|lstm)", "LSTM with peepholes: values differ (torch-mlir's conversion; reverse, "
     "bidirectional and layout 1 are expanded into forward ops)"),
    (r"test_scan", "Scan-8: a batch axis and sequence lengths, which the unrolling does not take"),
]


OPS_PAGE = ROOT / "docs" / "onnx.md"
OPS_START = "<!-- onnx-node-ops: start (scripts/onnx_node.py writes this table) -->"
OPS_END = "<!-- onnx-node-ops: end -->"


def case_ops() -> dict[str, str]:
    """Each case's op: its node's (several: the first node's); an ``_expanded`` case's is its
    base case's (ONNX's function body in the op's place)."""
    from pytest_mlir_snippets.onnx_backend.suite import node_cases

    cases = node_cases()
    ops = {c.name: c.model.graph.node[0].op_type for c in cases if c.model.graph.node}
    for name in ops:
        base = re.sub(r"_expanded(_ver\d+)?$", "", name)
        if base != name and base in ops:
            ops[name] = ops[base]
    return ops


def per_op(tests: dict[str, dict], ops: dict[str, str]) -> list[str]:
    """A row per op with a case not passing (the cases that do not pass named), then the ops
    all of whose cases pass."""
    by_op: dict[str, list[tuple[str, bool]]] = {}
    for test in tests.values():
        by_op.setdefault(ops.get(test["function"], "?"), []).append((test["function"], test["kind"] == "pass"))
    lines = [OPS_START, "", "| op | cases | pass | not passing |", "|---|---|---|---|"]
    for op, cases in sorted(by_op.items()):
        failing = sorted(name.removeprefix("test_") for name, ok in cases if not ok)
        if failing:
            lines.append(f"| {op} | {len(cases)} | {len(cases) - len(failing)} | {', '.join(failing)} |")
    passing = sorted(op for op, cases in by_op.items() if all(ok for _, ok in cases))
    lines += ["", f"Every case passes ({len(passing)} ops): {', '.join(passing)}.", "", OPS_END]
    return lines


def write_per_op(lines: list[str], page: Path = OPS_PAGE) -> None:
    text = page.read_text()
    start, end = text.index(OPS_START), text.index(OPS_END) + len(OPS_END)
    page.write_text(text[:start] + "\n".join(lines) + text[end:])


def reason(name: str) -> str:
    return next((why for pattern, why in WHY if re.match(pattern, name)), "")


def run(workers: int, pattern: str | None = None) -> tuple[list[dict], dict, float]:
    """(the run's items, with a failing item per case not written; the writer's summary; seconds)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from conformance import run_suite

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "onnx-node"
        summary = write_cases(folder, pattern)
        items, seconds = run_suite(folder, workers)
    for name, why in summary["not_written"].items():
        items.append({"file": f"onnx-node/{name}/model.mlir", "function": name, "stage": "import",
                      "kind": "import-error", "message": why, "signature": why})
    return items, summary, seconds


def section(workers: int, pattern: str | None = None) -> list[str]:
    from conformance import per_test
    from conformance import section as suite_section

    items, summary, seconds = run(workers, pattern)
    lines = suite_section(TITLE, items, seconds, workers, suite="onnx-node")
    tests = per_test(items)
    if pattern is None:
        write_per_op(per_op(tests, case_ops()))
    folded = sum(t["kind"] == "skip" and t.get("computed") == "compile-time" for t in tests.values())
    passed = sum(t["kind"] == "pass" for t in tests.values())
    left_out = Counter(summary["unmatchable"].values())
    extra = ["", f"Left out as no compiler can match them: {len(summary['unmatchable'])} cases "
             f"({'; '.join(f'{why}: {n}' for why, n in sorted(left_out.items()))}).", "",
             f"ONNX's harness (`mlir-snippets onnx-tests`) skips the {folded} cases whose outputs are computed at "
             f"compile time as the plugin's records do (`unittest.SkipTest`, with the reason): {passed} of "
             f"{len(tests)} pass there too."]
    return lines[:3] + extra + lines[3:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("-k", dest="pattern", help="a regular expression searched in the case names")
    args = parser.parse_args()
    start = time.perf_counter()
    print("\n".join(section(args.workers, args.pattern)))
    print(f"({time.perf_counter() - start:.1f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
