"""Run the corpora (on the cpu target, IREE's e2e tests on iree-cpu too) and write docs/conformance.md.

    python scripts/conformance.py [--corpus ../shared/corpus] [--workers 2] [--suite "IREE e2e" ...]

For each suite: a copy in a temporary folder (the corpus stays read-only),
``pytest -n WORKERS --mlir-json``, then per test (a function: compile and execute
together) its outcome, pass counts per outcome kind, wall time, and every failing
test with its failure signature. ``--suite`` runs only the suites named (a prefix of
the name) and keeps the other sections of the file as they are. ``--iree-test-suites DIR``
(a checkout of iree-org/iree-test-suites) adds all of IREE's ONNX operator tests, of which
the corpus holds a third.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JAX_CORPUS = str(ROOT / "tests" / "data" / "jax")  # the project's own (scripts/jax_corpus.py), not in the corpus
SUITES = {  # section name: corpus folder, targets
    "iree-onnx-ops": ("iree-onnx-ops", ("cpu",)),
    "tt-mlir StableHLO": ("tt-mlir-snippets/stablehlo", ("cpu",)),
    "openxla StableHLO testdata": ("stablehlo-testdata", ("cpu",)),
    "IREE e2e (tests/e2e)": ("iree-e2e", ("cpu", "iree-cpu")),
    "StableHLO interpreter tests (stablehlo/tests/interpret)": ("stablehlo-interpret", ("cpu",)),
    "JAX corpus (tests/data/jax)": (JAX_CORPUS, ("cpu", "iree-cpu")),
}


# Tests no compiler can match, by suite: (test name pattern, why); they stay in the tables
# and are left out of the denominator of the pass rate
UNMATCHABLE = {
    "iree-onnx-ops": [
        (r"test_bernoulli", "outputs drawn from a random generator (Bernoulli)"),
        (r"test_training_dropout(?!_zero_ratio)", "training-mode dropout: a random mask (a zero ratio stays in)"),
        (r"test_image_decoder", "image decoding (ImageDecoder), not a tensor computation"),
    ],
}


# Why a test still fails, where that is known (docs/onnx.md has the details)
WHY = {
    "stablehlo-interpret": {
        "bitcast_convert_op_test_c128_to_c64": "a segmentation fault inside stablehlo-legalize-to-linalg (torch-mlir's "
                                               "build) on a complex bitcast_convert: a lowering bug",
        "max_op_test_c64": "complex maximum with tied real parts (0.0 and -0.0): the lowering keeps the first "
                           "operand, the specification compares the imaginary parts: a lowering bug",
        "max_op_test_c128": "complex maximum with tied real parts (0.0 and -0.0): the lowering keeps the first "
                            "operand, the specification compares the imaginary parts: a lowering bug",
        "dynamic_gather_op_test": "its only inputs are the slice sizes, which the lowering needs constant",
        "dynamic_reshape_op_test_si64": "its only input is the shape, which the lowering needs constant",
        "test_complex": "a printing test: the RUN line's FileCheck reads what the interpreter prints",
        "test_ranks_and_dtypes": "a printing test: the RUN line's FileCheck reads what the interpreter prints",
        "test_sub_byte": "a printing test: its results (i2, i4, f6, f8, read back in a wide type) are constants, "
                         "folded at compile time",
    },
    "iree-onnx-ops": {
        "test_affine_grid_3d_expanded": "its Ifs fold and are inlined, but the import typed the values after them "
                                        "rank 0 ([]): it needs ONNX shape inference over the folded values",
        "test_scan_sum": "the import declares Scan-17 types ([2], [3,2]); the recorded data has Scan-8's batch axis "
                         "(1x2, 1x3x2): no exact-shape match (--mlir-lenient-shapes passes it)",
        "test_qlinearmatmul_2D_int8_float32": "the recorded output wraps -236 to 20 (onnx 1.17's reference, "
                                              "onnx/onnx#6169); the specification saturates to -128, as here",
        "test_qlinearmatmul_3D_int8_float16": "the recorded output wraps an out-of-range product (onnx 1.17's "
                                              "reference, onnx/onnx#6169); the specification saturates, as here",
        "test_qlinearmatmul_2D_int8_float16": "the recorded output wraps an out-of-range product (onnx 1.17's "
                                              "reference, onnx/onnx#6169); the specification saturates, as here",
        "test_qlinearmatmul_3D_int8_float32": "the recorded output wraps an out-of-range product (onnx 1.17's "
                                              "reference, onnx/onnx#6169); the specification saturates, as here",
        "test_affine_grid_2d_expanded": "its If folds, but the import typed the values after it rank 0 ([]): it "
                                        "needs ONNX shape inference over the folded values",
        "test_affine_grid_2d_align_corners_expanded": "its If folds, but the import typed the values after it rank "
                                                      "0 ([]): it needs ONNX shape inference over the folded values",
        "test_affine_grid_3d_align_corners_expanded": "its Ifs fold, but the import typed the values after them "
                                                      "rank 0 ([]): it needs ONNX shape inference",
        "test_lstm_with_peepholes": "torch-mlir's LSTM conversion: values differ with peepholes (not investigated)",
    },
}


def unmatchable(suite: str, function: str) -> str | None:
    return next((why for pattern, why in UNMATCHABLE.get(suite, []) if re.match(pattern, function)), None)


def run_suite(source: Path, workers: int, target: str = "cpu", keep: Path | None = None) -> tuple[list[dict], float]:
    """Run one corpus folder; ``keep``: a folder where the run's JSON records are copied."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / source.name
        shutil.copytree(source, copy)
        results = Path(tmp) / "results.json"
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", str(workers),
                        f"--mlir-target={target}", f"--mlir-json={results}", str(copy)], cwd=tmp,
                       stdout=subprocess.DEVNULL, check=False)
        seconds = time.perf_counter() - start
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            shutil.copy(results, keep / f"{source.name}-{target}.json")
        return json.loads(results.read_text())["items"], seconds


def per_test(items: list[dict]) -> dict[str, dict]:
    """One outcome per test: its first item that did not pass, else pass."""
    tests: dict[str, dict] = {}
    for item in sorted(items, key=lambda i: (i["file"], i["function"], i["stage"] != "compile")):
        key = f"{item['file']}::{item['function']}"
        if key not in tests or tests[key]["kind"] == "pass":
            tests[key] = item
    return tests


def folders(tests: dict[str, dict]) -> list[str]:
    """Files passing (every test of the file) and tests passing per folder, when the suite has subfolders."""
    files: dict[str, list[int]] = {}  # file: [passes, tests]
    for key, test in tests.items():
        counts = files.setdefault(key.split("::")[0], [0, 0])
        counts[0] += test["kind"] == "pass"
        counts[1] += 1
    tops = {file.split("/", 1)[0] for file in files}
    if len(tops) == 1 and all("/" in file for file in files):  # the suite's own folder (the rootdir's child)
        files = {file.split("/", 1)[1]: counts for file, counts in files.items()}
    by_folder: dict[str, list[int]] = {}  # folder: [files passing, files, tests passing, tests]
    for file, (ok, total) in files.items():
        row = by_folder.setdefault(file.split("/", 1)[0] + "/" if "/" in file else "(top level)", [0, 0, 0, 0])
        for i, value in enumerate((ok == total, 1, ok, total)):
            row[i] += value
    if not 1 < len(by_folder) <= 10:  # one folder, or a folder per test (IREE's layout)
        return []
    lines = ["", "| folder | files passing | tests passing |", "|---|---|---|"]
    rows = [*sorted(by_folder.items()), ("all", [sum(r[i] for r in by_folder.values()) for i in range(4)])]
    return [*lines, *(f"| {folder} | {r[0]} of {r[1]} | {r[2]} of {r[3]} |" for folder, r in rows)]


def excluded(tests: dict[str, dict]) -> list[str]:
    """The pass rate without the tests a target cannot take: IREE-only dialects on cpu
    (unsupported), files the installed IREE cannot parse, files IREE's CMake does not run."""
    left = {k: t for k, t in tests.items() if t["kind"] != "unsupported" and not t.get("info", {}).get(
        "iree_cannot_parse") and not (t["kind"] == "skip" and t["stage"] == "compile")}
    if len(left) == len(tests):
        return []
    passed = sum(t["kind"] == "pass" for t in left.values())
    return ["", f"Without the {len(tests) - len(left)} tests this target cannot take (unsupported dialects, files "
            f"the installed IREE cannot parse, files IREE's CMake does not run here): {passed} of {len(left)} pass "
            f"({100 * passed / max(1, len(left)):.1f}%)."]


def _kind(test: dict) -> str:
    if test["kind"] != "skip":
        return str(test["kind"])
    if test.get("computed") == "compile-time":
        return "skip (computed at compile time)"
    if test.get("computed") == "nothing":
        return "skip (nothing computed: vacuous checks)"
    return "skip (nothing to compare)" if test.get("golden") == "none" else f"skip ({test['message'][:40]})"


def goldens(items: list[dict]) -> list[str]:
    """The passing tests by what their verdict compared (recorded outputs with inputs baked in
    as constants apart)."""
    found = Counter(f"{i['golden']} (baked inputs)" if i.get("baked") and i["golden"] == "recorded" else i["golden"]
                    for i in items if i["stage"] == "execute" and i["kind"] == "pass" and i.get("golden"))
    if not found:
        return []
    lines = ["", "| golden of the passing tests | tests |", "|---|---|"]
    lines += [f"| {golden} | {count} |" for golden, count in sorted(found.items(), key=lambda kv: -kv[1])]
    return lines + computed(items)


def computed(items: list[dict]) -> list[str]:
    """The execute verdicts that compared something, by whether their results were computed
    at run time (``computed``; a compile-time result is a skip, not a pass)."""
    verdicts = [i for i in items if i["stage"] == "execute" and i.get("golden") not in (None, "none")]
    found = Counter(str(i.get("computed") or "(not said)") for i in verdicts)
    if not verdicts:
        return []
    runtime = found.get("runtime", 0)
    empty = sum(i["kind"] == "pass" and (i.get("info") or {}).get("compared") == 0 for i in verdicts)
    return ["", f"{runtime} of {len(verdicts)} execute verdicts ({100 * runtime / len(verdicts):.1f}%) were computed "
            "at run time.", "", "| computed | execute verdicts |", "|---|---|",
            *(f"| {kind} | {count} |" for kind, count in sorted(found.items(), key=lambda kv: -kv[1])),
            *(["", f"{empty} of the passes compared 0 elements (results without elements: their shapes and element "
               "types only)."] if empty else [])]


def denominator(name: str, tests: dict[str, dict]) -> list[str]:
    """The pass rate without the tests no compiler can match, and those tests with the reason."""
    left_out = {k: why for k in tests if (why := unmatchable(name, k.split("::")[1]))}
    if not left_out:
        return []
    kept = {k: t for k, t in tests.items() if k not in left_out}
    passed = sum(t["kind"] == "pass" for t in kept.values())
    lines = ["", f"Without the {len(left_out)} tests no compiler can match: {passed} of {len(kept)} pass "
             f"({100 * passed / max(1, len(kept)):.1f}%). Left out:", "", "| test | why |", "|---|---|"]
    return lines + [f"| `{k.split('::')[1]}` | {why} |" for k, why in sorted(left_out.items())]


def section(name: str, items: list[dict], seconds: float, workers: int, suite: str | None = None) -> list[str]:
    """``name``'s section; ``suite``: whose lists of tests no compiler can match and of known
    failures apply (default: ``name``'s)."""
    suite = suite or name
    tests = per_test(items)
    passed = sum(t["kind"] == "pass" for t in tests.values())
    kinds = Counter(_kind(t) for t in tests.values())
    lines = [f"## {name}", "",
             f"{passed} of {len(tests)} tests pass with a golden match ({100 * passed / max(1, len(tests)):.1f}%), "
             f"{seconds:.1f} s wall at -n {workers} ({seconds / max(1, len(tests)):.3f} s per test).", "",
             "| outcome | tests |", "|---|---|"]
    lines += [f"| {kind} | {count} |" for kind, count in sorted(kinds.items(), key=lambda kv: -kv[1])]
    lines += goldens(items)
    lines += denominator(suite, tests)
    lines += excluded(tests)
    lines += folders(tests)
    failing = sorted((k, t) for k, t in tests.items() if t["kind"] != "pass")
    why = WHY.get(suite, {})
    explained = bool(why) or suite == "onnx-node"  # a column of reasons
    lines += ["", f"### Not passing ({len(failing)})", "", "| test | stage | kind | signature |"
              + (" why |" if explained else ""), "|---|---|---|---|" + ("---|" if explained else "")]
    names = Counter(key.split("::")[1] for key in tests)
    for key, t in failing:
        text = (t["signature"] or t["message"] or "-").replace("|", "\\|")
        signature = text.splitlines()[0][:160]
        function = key.split("::")[1]  # the file too where names repeat (openxla's @main)
        label = function if names[function] == 1 else f"{key.split('/', 1)[-1].split('::')[0]}::{function}"
        reason = (unmatchable(suite, function) or why.get(function, "") or _pattern_reason(suite, function)
                  ) if explained else None
        row = f"| `{label}` | {t['stage']} | {t['kind']} | {signature} |"
        lines.append(row + (f" {reason} |" if explained else ""))
    return [*lines, ""]


def _pattern_reason(suite: str, function: str) -> str:
    """The reason of a failure group (scripts/onnx_node.py's patterns)."""
    if suite != "onnx-node":
        return ""
    from onnx_node import reason

    return reason(function)


def _sections(path: Path) -> dict[str, list[str]]:
    """The ``## `` sections of an existing conformance file, by title (kept by ``--suite``)."""
    found: dict[str, list[str]] = {}
    title = ""
    for line in path.read_text().splitlines() if path.exists() else []:
        if line.startswith("## "):
            title = line[3:]
        if title:
            found.setdefault(title, []).append(line)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "conformance.md")
    parser.add_argument("--suite", action="append", default=[], help="run only this suite (a name prefix)")
    parser.add_argument("--iree-test-suites", type=Path, help="a checkout of iree-org/iree-test-suites: also run "
                        "all its ONNX operator tests (onnx_ops/onnx/node/generated; the corpus has a third)")
    parser.add_argument("--keep", type=Path, help="copy each suite's JSON records into this folder (to compare runs)")
    parser.add_argument("--integration-layout", type=Path, help="upstream's mlir/test/Integration folder with its "
                        "lit.local.cfg files (default: the corpus's mlir-integration/ laid out under its lit-configs/)")
    args = parser.parse_args()
    lines = ["# Conformance on the cpu target (and IREE's e2e tests on iree-cpu)", "",
             f"Written by `python scripts/conformance.py` on {time.strftime('%Y-%m-%d')}; "
             "a test passes when its compile and execute items both pass; each suite says what the passes "
             "compared (the golden basis of each execute verdict: `recorded` outputs, the snippet's own `checks` "
             "(StableHLO's, IREE's), StableHLO's `interpreter`, a second compiler `differential:<target>`, or the "
             "plugin's own lowering, `self`). A test whose execute compared nothing (golden `none`) is not a pass.",
             ""]
    kept = _sections(args.out)
    for name, (folder, targets) in SUITES.items():
        for target in targets:
            title = name if targets == ("cpu",) else f"{name} on {target}"
            if args.suite and not any(name.startswith(s) for s in args.suite):
                lines += kept.get(title, [])
                continue
            items, seconds = run_suite(args.corpus / folder, args.workers, target, args.keep)
            lines += section(title, items, seconds, args.workers, suite=folder)
            print(f"{title}: done in {seconds:.1f} s")
    full = "IREE's ONNX operator tests, all of iree-test-suites"
    if args.iree_test_suites:
        items, seconds = run_suite(args.iree_test_suites / "onnx_ops" / "onnx" / "node" / "generated", args.workers)
        lines += section(full, items, seconds, args.workers, suite="iree-onnx-ops")
        print(f"{full}: done in {seconds:.1f} s")
    else:
        lines += kept.get(full, [])
    from onnx_node import TITLE as ONNX_NODE
    from onnx_node import section as onnx_node_section

    if args.suite and not any(ONNX_NODE.startswith(s) for s in args.suite):
        lines += kept.get(ONNX_NODE, [])
    else:
        lines += onnx_node_section(args.workers)
        print(f"{ONNX_NODE}: done")
    integration = "MLIR integration tests (RUN and CHECK lines)"
    if args.suite and not any(integration.startswith(s) for s in args.suite):
        lines += kept.get(integration, [])
    elif (args.corpus / "mlir-integration").is_dir():  # upstream's integration tests: RUN/CHECK, against lit
        from mlir_integration import section as integration_section

        lines += integration_section(args.corpus / "mlir-integration", args.workers)
        print("MLIR integration tests: done")
    lines += _layout_section(args, kept)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines))
    print(f"wrote {args.out}")


def _layout_section(args: argparse.Namespace, kept: dict[str, list[str]]) -> list[str]:
    """Upstream's integration tests in upstream's layout: its ``lit.local.cfg`` files at their
    places (``Integration/lit.local.cfg`` turns the tests off unless the build says on)."""
    title = "MLIR integration tests in upstream's layout (with its lit.local.cfg files)"
    if args.suite and not any(title.startswith(s) for s in args.suite):
        return kept.get(title, [])
    with tempfile.TemporaryDirectory() as tmp:
        layout = args.integration_layout
        if layout is None:
            configs, tests = args.corpus / "lit-configs" / "Integration", args.corpus / "mlir-integration"
            if not configs.is_dir() or not tests.is_dir():
                return kept.get(title, [])
            layout = Path(tmp) / "Integration"
            shutil.copytree(tests, layout, ignore=shutil.ignore_patterns("SOURCES.tsv"))
            shutil.copytree(configs, layout, dirs_exist_ok=True)
        items, seconds = run_suite(layout, args.workers, "cpu", args.keep)
    print(f"{title}: done in {seconds:.1f} s")
    return section(title, items, seconds, args.workers)


if __name__ == "__main__":
    main()
