"""Per-test time of IREE's ONNX operator tests on the cpu target: this tree against a git
ref, taking turns in one run (so that the machine's other load slows both alike).

    python bench/onnx_time.py REF [--rounds 2] [--workers 2] [--corpus ../shared/corpus]

Each round runs the whole suite cold (``--mlir-no-cache``) once per tree, the trees'
order alternating, and keeps wall and CPU seconds (pytest and every process it started);
the figures are medians over the rounds, per test, with this/ref quotients and the
passes of each tree.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from perfcompare import ROOT, ref_tree, run, tree_env


def suite_round(corpus: Path, folder: Path, env: dict[str, str], workers: int) -> tuple[float, float, int, int]:
    """(wall, CPU, tests, passes) of one cold run of the suite in ``folder``."""
    copy = folder / "iree-onnx-ops"
    if not copy.exists():
        shutil.copytree(corpus / "iree-onnx-ops", copy)
    results = folder / "results.json"
    wall, cpu = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--mlir-no-cache",
                     "-n", str(workers), f"--mlir-json={results}", "iree-onnx-ops"], folder, env, check=False)
    tests: dict[str, bool] = {}
    for item in json.loads(results.read_text())["items"]:
        key = f"{item['file']}::{item['function']}"
        tests[key] = tests.get(key, True) and item["kind"] == "pass"
    return wall, cpu, len(tests), sum(tests.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ref")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    args = parser.parse_args()
    samples: dict[str, list[tuple[float, float, int, int]]] = {"this": [], "ref": []}
    with tempfile.TemporaryDirectory(prefix="onnx-time-") as tmp, ref_tree(args.ref, Path(tmp)) as checkout:
        trees = {"this": ROOT / "src", "ref": checkout / "src"}
        for r in range(args.rounds):
            for name in (("this", "ref") if r % 2 == 0 else ("ref", "this")):
                folder = Path(tmp) / name
                folder.mkdir(exist_ok=True)
                samples[name].append(suite_round(args.corpus, folder, tree_env(trees[name]), args.workers))
            print(f"round {r + 1}/{args.rounds} done", flush=True)
    print(f"\nIREE's ONNX operator tests, -n {args.workers}, cold, {args.rounds} round(s); this tree against "
          f"{args.ref}; medians\n")
    print("| tree | tests | passing | wall s | CPU s | wall per test | CPU per test |\n|---|---|---|---|---|---|---|")
    med = {}
    for name, rows in samples.items():
        wall, cpu = statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
        tests, passing = rows[-1][2], rows[-1][3]
        med[name] = (wall / tests, cpu / tests)
        print(f"| {name} | {tests} | {passing} | {wall:.1f} | {cpu:.1f} | {wall / tests:.3f} | {cpu / tests:.3f} |")
    print(f"\nthis/ref per test: wall {med['this'][0] / med['ref'][0]:.3f}, CPU {med['this'][1] / med['ref'][1]:.3f}")


if __name__ == "__main__":
    main()
