"""How repeatable is an optimization-run benchmark? Run each iteration's benchmark item
several times (each a fresh pytest and sandbox), print the spread of its medians, and
write them to docs/repeatability.md.

    python bench/repeat_benchmark.py [--run examples/runs/cpu_mlp] [--iteration v0 v1 v2] [--repeat 8]
                                     [--layout fixed random]

Each repetition runs once with each ``--mlir-bench-layout`` (the fixed layout, the plugin's
default, against a randomized one, as plain programs run), in copies of the run of their own.

Let nothing else run meanwhile. Each repetition starts without a benchmark history
(``benchmarks.json`` is removed first, the copied run's included): a repetition is not
anchored to the median an earlier one measured, so the spread is that of independent runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_mlir_snippets.model import history

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, default=ROOT / "examples" / "runs" / "cpu_mlp")
    parser.add_argument("--iteration", nargs="+", default=["v0", "v1", "v2"])
    parser.add_argument("--repeat", type=int, default=8)
    parser.add_argument("--bench-time", type=float, default=1.0)
    parser.add_argument("--bench-settle", type=float, default=None, help="default: the plugin's")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "repeatability.md")
    parser.add_argument("--layout", nargs="+", choices=("fixed", "random"), default=["fixed", "random"],
                        help="--mlir-bench-layout values to compare, taking turns (default: both)")
    args = parser.parse_args()
    summary, rows = [], []
    with tempfile.TemporaryDirectory() as tmp:
        runs = {layout: Path(tmp) / layout / args.run.name for layout in args.layout}  # a run's digest is its own
        for run in runs.values():
            shutil.copytree(args.run, run)
        for iteration in args.iteration:
            medians: dict[str, list[float]] = {layout: [] for layout in runs}
            settled: dict[str, list[float]] = {layout: [] for layout in runs}
            walls: list[float] = []
            for _ in range(args.repeat):
                for layout, run in runs.items():
                    (run / history.FILE).unlink(missing_ok=True)
                    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(run), "-k",
                               f"{iteration} and benchmark", f"--mlir-bench-time={args.bench_time}",
                               f"--mlir-bench-layout={layout}"]
                    if args.bench_settle is not None:
                        command.append(f"--mlir-bench-settle={args.bench_settle}")
                    start = time.perf_counter()
                    subprocess.run(command, cwd=run.parent, check=True, stdout=subprocess.DEVNULL)
                    walls.append(time.perf_counter() - start)
                    data = history.entries(run, "cpu")[iteration]
                    medians[layout].append(data["median_ms"])
                    done = bool(data.get("settled", 1))
                    if done:
                        settled[layout].append(data["median_ms"])
                    rows.append(f"| {iteration} | {layout} | {data['median_ms']:.4f} | {data['p20_ms']:.4f} | "
                                f"{data['p80_ms']:.4f} | {int(data['samples'])} | {int(data['slowed'])} | "
                                f"{data['median_all_ms']:.4f} | {'yes' if done else 'no'} | {walls[-1]:.1f} |")
                    print(rows[-1], flush=True)
            summary += [f"{args.run.name}/{iteration}, {layout} layout: {args.repeat} runs, "
                        f"{_spread(medians[layout])}; the {len(settled[layout])} settled: "
                        f"{_spread(settled[layout])}" for layout in runs]
            summary[-1] += f"; pytest {min(walls):.1f}..{max(walls):.1f} s per run"
    print("\n".join(summary))
    args.out.write_text("\n".join([
        "# Benchmark repeatability", "",
        f"Written by `python bench/repeat_benchmark.py --repeat {args.repeat}` on {time.strftime('%Y-%m-%d %H:%M')}, "
        f"{os.cpu_count()} cores: each iteration's benchmark item of `{args.run.name}` run {args.repeat} times "
        f"with each memory layout ({', '.join(runs)}; `--mlir-bench-layout`, taking turns), each in a fresh pytest "
        f"(`-k 'vN and benchmark' --mlir-bench-time={args.bench_time}`). Times in ms; "
        "\"median of all\": over every timed call, the calls left out included; seconds: the whole pytest run.", "",
        *[f"- {line}" for line in summary], "",
        "| iteration | layout | median | p20 | p80 | samples | left out | median of all | settled | seconds |",
        "|---|---|---|---|---|---|---|---|---|---|", *rows, ""]))


def _spread(medians: list[float]) -> str:
    if not medians:
        return "none"
    spread = (max(medians) - min(medians)) / min(medians)
    return f"medians {min(medians):.4f}..{max(medians):.4f} ms, spread {100 * spread:.1f}% of the smallest"


if __name__ == "__main__":
    main()
