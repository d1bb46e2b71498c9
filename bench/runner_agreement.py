"""Do the plugin's optimization-run benchmarks agree with upstream's own runner? Time every
iteration of cpu optimization runs with the plugin (its ``vN[benchmark]`` items) and with
``mlir-runner -O3`` on the same IR, and write both medians and their ratio to
docs/benchmark-agreement.md.

    python bench/runner_agreement.py [RUN ...] [--rounds 3] [--out docs/benchmark-agreement.md]

RUN: an optimization run's folder (default: every run under examples/runs/ whose
env_check.md names the cpu target). Upstream's side is built with upstream's tools only,
from the run's files: ``mlir-opt`` applies ``vN/transform.mlir`` to ``model_linalg.mlir``
(``transform-preload-library``, ``transform-interpreter``), then ``vN/pass_pipeline.txt``;
a ``@main`` written here (``func``/``memref``, lowered by ``mlir-opt`` too) copies the same
inputs the plugin feeds (the run's recorded inputs, else the plugin's seeded ones) into
fresh buffers, calls the function ``--warmup`` times, then times each of ``--calls`` calls
between two ``rtclock()`` calls (the result's allocation inside, its free outside, as the
plugin does), and prints the times; ``mlir-runner -O3`` runs it, without address-space
randomization as the plugin's workers run. Rounds alternate the two, in a fresh process
each; a median is the median of the rounds' medians.

Let nothing else run meanwhile: both sides time one core.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from pytest_mlir_snippets.model import layout
from pytest_mlir_snippets.tools.upstream_timing import UpstreamError, UpstreamIteration

ROOT = Path(__file__).resolve().parent.parent
WARMUP_S = 0.2  # mlir-runner's first calls: page faults in fresh heap memory, a cold CPU (up to 1.5x)
AGREE, BEST = 1.15, 1.10  # the bounds: a median within 1.15x, the best within 10% of the fastest


@dataclass
class Row:
    run: str
    iteration: str
    plugin: list[float] = field(default_factory=list)  # medians in ms, one per round
    runner: list[float] = field(default_factory=list)
    error: str = ""

    @property
    def ratio(self) -> float:
        return statistics.median(self.plugin) / statistics.median(self.runner)


def cpu_runs() -> list[Path]:
    """The optimization runs under examples/runs/ whose own target is cpu."""
    return [run for run in sorted((ROOT / "examples" / "runs").iterdir())
            if layout.is_run_model(run / layout.MODEL) and layout.declared_target(run) == "cpu"]


def iterations(run: Path) -> list[str]:
    return [folder.name for folder in layout.iterations(run)]


def plugin_run(run: Path, bench_time: float) -> tuple[dict[str, float], str]:
    """The medians of the run's ``vN[benchmark]`` items, and the iteration the plugin names
    best (whose files it copied to ``best_transform.mlir`` and ``best_pipeline.txt``; "" for
    none), from one pytest of every item but PyTorch's, in a fresh copy of the run."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / run.name
        shutil.copytree(run, copy, ignore=shutil.ignore_patterns("benchmark*", "best_*", "speedup*", "*-report.txt"))
        report = Path(tmp) / "run.json"
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(copy), "-k",
                        "not pytorch", f"--mlir-bench-time={bench_time}", f"--mlir-json={report}"],
                       cwd=tmp, stdout=subprocess.DEVNULL, check=False)
        items = json.loads(report.read_text())["items"]
        copied = (("best_transform.mlir", "transform.mlir"), ("best_pipeline.txt", "pass_pipeline.txt"))
        best = [name for name in iterations(copy) if all(
            (copy / mine).is_file() and (copy / mine).read_text() == (copy / name / theirs).read_text()
            for mine, theirs in copied)]
    medians = {item["function"]: item["benchmark"]["median_ms"] for item in items
               if item["stage"] == "benchmark" and item.get("benchmark", {}).get("median_ms")}
    return medians, best[0] if best else ""


def measure(runs: list[Path], rounds: int, bench_time: float, warmup: int) -> tuple[list[Row], dict[str, str]]:
    """Every iteration's rows, and the iteration the plugin named best in each run's last round."""
    rows: dict[tuple[str, str], Row] = {}
    best: dict[str, str] = {}
    upstream: dict[tuple[str, str], UpstreamIteration] = {}
    for run in runs:
        for iteration in iterations(run):
            row = rows[(run.name, iteration)] = Row(run.name, iteration)
            try:
                upstream[(run.name, iteration)] = UpstreamIteration(run, iteration, warmup)
            except UpstreamError as error:
                row.error = f"upstream: {error}"
    for number in range(rounds):
        for run in runs:
            medians, best[run.name] = plugin_run(run, bench_time)
            for iteration in iterations(run):
                row = rows[(run.name, iteration)]
                if row.error:
                    continue
                if iteration not in medians:
                    row.error = "the plugin's benchmark did not pass"
                    continue
                row.plugin.append(medians[iteration])
                calls = int(min(20_000, max(50, bench_time * 1e3 / medians[iteration])))
                timed = upstream[(run.name, iteration)]
                timed.warmup = int(min(20_000, max(warmup, WARMUP_S * 1e3 / medians[iteration])))
                row.runner.append(timed.median(calls))
                print(f"round {number + 1}: {run.name}/{iteration}: plugin {row.plugin[-1]:.4f} ms, "
                      f"mlir-runner {row.runner[-1]:.4f} ms", file=sys.stderr)
    return list(rows.values()), best


def spread(medians: list[float]) -> str:
    return f"{min(medians):.4f}..{max(medians):.4f}"


def report(rows: list[Row], best: dict[str, str], rounds: int) -> str:
    lines = ["# Benchmarks: the plugin against mlir-runner", "",
             f"Written by `python bench/runner_agreement.py` on {time.strftime('%Y-%m-%d %H:%M')}: each iteration "
             f"timed by the plugin (its `vN[benchmark]` item) and by `mlir-runner -O3` on the same IR, {rounds} "
             "round(s) taking turns; a median is the median of the rounds' medians, in ms. See the script's "
             "docstring for how upstream's side is built.", "",
             "| run | iteration | plugin | mlir-runner | ratio | agrees (within 1.15x) | plugin's rounds | "
             "mlir-runner's rounds |", "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        if row.error:
            lines.append(f"| {row.run} | {row.iteration} | - | - | - | {row.error} | - | - |")
            continue
        lines.append(f"| {row.run} | {row.iteration} | {statistics.median(row.plugin):.4f} | "
                     f"{statistics.median(row.runner):.4f} | {row.ratio:.3f} | "
                     f"{'yes' if 1 / AGREE <= row.ratio <= AGREE else 'no'} | {spread(row.plugin)} | "
                     f"{spread(row.runner)} |")
    lines += ["", "| run | best by the plugin | fastest by mlir-runner | the best's mlir-runner median against "
              "the fastest's | within 10% |", "|---|---|---|---|---|"]
    for run in dict.fromkeys(row.run for row in rows):
        timed = {row.iteration: row for row in rows if row.run == run and not row.error}
        if not timed:
            continue
        fastest = min(timed.values(), key=lambda row: statistics.median(row.runner))
        if best.get(run) not in timed:
            lines.append(f"| {run} | none | {fastest.iteration} | - | no |")
            continue
        slower = statistics.median(timed[best[run]].runner) / statistics.median(fastest.runner)
        lines.append(f"| {run} | {best[run]} | {fastest.iteration} | {slower:.3f}x | "
                     f"{'yes' if slower <= BEST else 'no'} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("runs", nargs="*", type=Path, help="optimization runs (default: examples/runs' cpu runs)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--bench-time", type=float, default=1.0, help="seconds of timed calls per side and round")
    parser.add_argument("--warmup", type=int, default=5,
                        help=f"untimed calls before mlir-runner's timed ones (at least {WARMUP_S} s of them)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmark-agreement.md")
    args = parser.parse_args()
    rows, best = measure([run.resolve() for run in args.runs] or cpu_runs(), args.rounds, args.bench_time,
                         args.warmup)
    args.out.write_text(report(rows, best, args.rounds))
    print(args.out.read_text())


if __name__ == "__main__":
    main()
