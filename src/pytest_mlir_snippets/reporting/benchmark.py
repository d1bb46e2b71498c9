"""Benchmark tables of optimization runs: ``vN/benchmark.md`` and, when the session
ends, the run's ``benchmark.md``, ``speedup.png``, ``best_pipeline.txt`` and
``best_transform.mlir`` (from the fastest correct iteration; never an incorrect one).

Each ``vN/benchmark.md`` ends with its figures as a JSON block, so that a session
that runs only some iterations (``-k v3``) still compares against the others' last
measurements. Written on the controller only (the same with and without xdist).
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_mlir_snippets.worker.benchstats import BLOCK, BLOCK_SLOWED, FIGURES, SLOWED, STATS

REFERENCE = "reference.py"
_JSON_BLOCK = re.compile(r"```json\n(.*?)\n```", re.DOTALL)
PLOT = "speedup.png"
CHECKS = ("contract", "compile", "host_ops", "launch")


def read_iteration(folder: Path) -> dict[str, Any]:
    path = folder / "benchmark.md"
    m = _JSON_BLOCK.search(path.read_text()) if path.is_file() else None
    try:
        return dict(json.loads(m.group(1))) if m else {}
    except json.JSONDecodeError:
        return {}


def code_digest(*texts: str) -> str:
    """What a measurement was of: the texts given, the toolchain and this machine."""
    from pytest_mlir_snippets.sandbox.cache import toolchain  # not at import: the cache module brings numpy

    digest = hashlib.sha256()
    for text in (*texts, toolchain(), platform.node()):
        digest.update(text.encode() + b"\0")
    return digest.hexdigest()[:16]


def write_iteration(folder: Path, target: str, metrics: dict[str, float], **extra: Any) -> None:
    """``vN/benchmark.md``: this iteration's timing, then (at the end of the session)
    its correctness and speedups."""
    data = {"iteration": folder.name, "target": target, "measured": time.strftime("%Y-%m-%d %H:%M:%S"),
            **{k: metrics[k] for k in FIGURES if k in metrics}, **extra}
    hypothesis = folder / "hypothesis.txt"
    lines = [f"# {folder.name} benchmark ({target})", ""]
    said = hypothesis.read_text().strip() if hypothesis.is_file() else ""
    if said:
        lines += [f"Hypothesis: {said.splitlines()[0]}", ""]
    lines += ["| statistic | value |", "|---|---|"]
    lines += [f"| {k.removesuffix('_ms')} | {_ms(data[k]) if k.endswith('_ms') else int(data[k])} |"
              for k in STATS if k in data]
    if "slowed" in data:
        lines.append(f"| left out (CPU slowed) | {int(data['slowed'])}, median of all samples "
                     f"{_ms(data['median_all_ms'])} |")
    if data.get("settled") == 0:
        lines.append("| settled | no: the CPU did not run at its usual speed for long enough (see "
                     "--mlir-bench-settle); these figures are not comparable |")
    if data.get("fixed_layout") == 0:
        lines.append("| memory layout | randomized (--mlir-bench-layout=random, or the kernel refused to turn "
                     "address-space randomization off): medians may differ by up to ~10% from run to run |")
    for key, label in (("correctness", "correctness"), ("speedup_v0", "speedup vs v0"),
                       ("speedup_eager", "speedup vs PyTorch eager"),
                       ("speedup_compile", "speedup vs torch.compile")):
        if key in data:
            lines.append(f"| {label} | {data[key] if isinstance(data[key], str) else f'{data[key]:.2f}x'} |")
    lines += ["", "Times in milliseconds: wall time of the call alone, after warm-up, on a monotonic clock; "
              "calls during which the CPU ran slowed (a fixed probe before or after them, or most of "
              f"those of their block of {BLOCK} calls, took over {SLOWED}x its usual time, or the block's "
              f"median call over {BLOCK_SLOWED}x the usual block's) are left out."
              + (" The worker ran without address-space randomization, so the memory layout is the same "
                 "from run to run." if data.get("fixed_layout") == 1 else ""), "",
              "```json", json.dumps(data, indent=1, sort_keys=True), "```", ""]
    (folder / "benchmark.md").write_text("\n".join(lines))


def _ms(value: float) -> str:
    return f"{value:.4f}" if value < 1 else f"{value:.3f}"


class RunReports:
    """Gathers optimization-run items as they finish; writes the tables at the end."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.runs: dict[str, dict[str, dict[str, Any]]] = {}  # run -> iteration -> stage -> properties

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        if "mlir_run" not in props or (report.when != "call" and not (report.when == "setup" and report.skipped)):
            return
        kind = str(props.get("mlir_kind", "skip" if report.skipped else "pass" if report.passed else "error"))
        reason = ""
        if report.skipped:
            kind = "skipped"
            reason = str(report.longrepr[2]).removeprefix("Skipped: ") if isinstance(report.longrepr, tuple) else ""
        entry = self.runs.setdefault(str(props["mlir_run"]), {}).setdefault(str(props.get("mlir_iteration", "")), {})
        entry[str(props["mlir_run_stage"])] = dict(props, kind=kind, reason=reason)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(self.config, "workerinput"):
            return  # an xdist worker: the controller writes
        for run, stages in self.runs.items():
            if any("benchmark" in s or "correctness" in s or "pytorch" in s for s in stages.values()):
                write_run(Path(run), stages)


def write_run(run: Path, seen: dict[str, dict[str, Any]]) -> None:
    from pytest_mlir_snippets.items.iteration import iterations

    pytorch = seen.get("", {}).get("pytorch", {})
    rows = []
    for folder in iterations(run):
        data = read_iteration(folder)
        stages = seen.get(folder.name, {})
        if "correctness" in stages:
            data["correctness"] = stages["correctness"]["kind"]
        if "benchmark" in stages and stages["benchmark"]["kind"] != "pass":
            data = {k: v for k, v in data.items() if k not in FIGURES}  # stale figures are not this session's
            data["benchmark"] = stages["benchmark"]["kind"]
        data.setdefault("correctness", "not run")
        failed = [f"{stage} {stages[stage]['kind']}" for stage in CHECKS
                  if stage in stages and stages[stage]["kind"] != "pass"]
        data["checks"] = ", ".join(failed) if failed else ("pass" if any(c in stages for c in CHECKS) else "not run")
        rows.append((folder, data))
    target = next((str(s["mlir_target"]) for stages in seen.values() for s in stages.values()
                   if "mlir_target" in s), "cpu")
    reasons = sorted({s["reason"] for stages in seen.values() for s in stages.values() if s.get("reason")})
    base = next((d.get("median_ms") for f, d in rows if f.name == "v0"), None)
    eager, compiled = pytorch.get("mlir_eager_median_ms"), pytorch.get("mlir_compile_median_ms")
    for folder, data in rows:
        median = data.get("median_ms")
        if not median:
            continue
        for key, reference in (("speedup_v0", base), ("speedup_eager", eager), ("speedup_compile", compiled)):
            if reference:
                data[key] = float(reference) / float(median)
        write_iteration(folder, target, data,
                        **{k: v for k, v in data.items() if k not in FIGURES and k not in ("iteration", "target",
                                                                                            "measured")})
    best = min(((f, d) for f, d in rows if d.get("correctness") == "pass" and d.get("checks") in ("pass", "not run")
                and d.get("median_ms")),
               key=lambda fd: float(fd[1]["median_ms"]), default=None)
    for name, source in (("best_pipeline.txt", "pass_pipeline.txt"), ("best_transform.mlir", "transform.mlir")):
        if best is not None:
            shutil.copyfile(best[0] / source, run / name)
        elif (run / name).exists():
            (run / name).unlink()  # no correct iteration: no best, not a stale one
    plotted = plot(run / PLOT, rows)
    (run / "benchmark.md").write_text(render(run, target, rows, best, pytorch, plotted, reasons))


def render(run: Path, target: str, rows: list[tuple[Path, dict[str, Any]]], best: tuple[Path, dict[str, Any]] | None,
           pytorch: dict[str, Any], plotted: str, reasons: list[str]) -> str:
    lines = [f"# Benchmark of {run.name} ({target})", "",
             f"Written by pytest-mlir-snippets on {time.strftime('%Y-%m-%d %H:%M:%S')}. Times in milliseconds "
             "(median of repeated calls after warm-up, monotonic clock; \"left out\": calls made while the CPU "
             "ran slowed, see each vN/benchmark.md; \"unsettled\": the CPU never ran at its usual speed for "
             "long enough, not comparable); speedups are medians' ratios. "
             "An iteration that is not correct is never best.", ""]
    head = "| iteration | checks | correctness | median | p20 | p80 | min | max | std | samples | left out | vs v0 |"
    sep = "|---|---|---|---|---|---|---|---|---|---|---|---|"
    if pytorch:
        head += " vs eager | vs torch.compile |"
        sep += "---|---|"
    lines += [head, sep]
    for folder, data in rows:
        cells = [folder.name + (" (best)" if best and best[0] == folder else ""), str(data.get("checks")),
                 str(data.get("correctness"))]
        cells += [_ms(float(data[k])) if k in data else "-" for k in STATS[:-1]]
        cells += [str(int(data[k])) if k in data else "-" for k in ("samples", "slowed")]
        cells[-1] += " (unsettled)" if data.get("settled") == 0 else ""
        keys = ["speedup_v0"] + (["speedup_eager", "speedup_compile"] if pytorch else [])
        cells += [f"{data[k]:.2f}x" if k in data else "-" for k in keys]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines += [f"Skipped: {reason}" for reason in reasons] + ([""] if reasons else [])
    if pytorch:
        lines += [f"PyTorch reference ({REFERENCE}): eager {_figure(pytorch, 'eager')}, "
                  f"torch.compile {_figure(pytorch, 'compile')}.", ""]
    lines.append(f"Best: {best[0].name} ({_ms(float(best[1]['median_ms']))} ms); best_pipeline.txt and "
                 f"best_transform.mlir are its files." if best else
                 "Best: none (no correct iteration with a benchmark); no best_* files.")
    lines += ["", f"![speedup]({PLOT})" if plotted == "" else f"Plot not written: {plotted}", ""]
    return "\n".join(lines)


def _figure(pytorch: dict[str, Any], name: str) -> str:
    value = pytorch.get(f"mlir_{name}_median_ms")
    return f"{_ms(float(value))} ms" if value else str(pytorch.get(f"mlir_{name}_error", "not measured"))


def plot(path: Path, rows: list[tuple[Path, dict[str, Any]]]) -> str:
    """A bar per iteration: its speedup against v0 (incorrect ones grey and hatched).
    Returns "" when written, else why not."""
    measured = [(f.name, d) for f, d in rows if "speedup_v0" in d]
    if not measured:
        return "no iteration has a speedup against v0"
    try:
        import matplotlib  # type: ignore[import-not-found, unused-ignore]

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return "matplotlib is not installed (pip install 'pytest-mlir-snippets[plot]')"
    figure, axes = plt.subplots(figsize=(1.2 * len(measured) + 2, 3.5))
    for i, (_, data) in enumerate(measured):
        correct = data.get("correctness") == "pass"
        axes.bar(i, data["speedup_v0"], color="tab:blue" if correct else "lightgrey",
                 hatch="" if correct else "//", edgecolor="black")
    axes.set_xticks(range(len(measured)), [name for name, _ in measured])
    axes.axhline(1.0, color="black", linewidth=0.8)
    axes.set_ylabel("speedup vs v0 (median)")
    axes.set_title(f"{path.parent.name}: grey = not correct")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return ""
