"""Benchmark tables of optimization runs, written on the controller when the session
ends, from the session's records and the run's benchmark history (``history.py``):
``vN/benchmark.md``, the run's ``benchmark.md``, ``speedup.png``, ``best_pipeline.txt``
and ``best_transform.mlir`` (from the fastest correct iteration; never an incorrect one).

The files of the run's own target (its ``env_check.md``'s, else cpu) have these names;
another target's get its name in theirs (``benchmark.cuda.md``), so that measuring a
run on one target never rewrites another's results.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from pytest_mlir_snippets.model import history
from pytest_mlir_snippets.model.layout import CHECKS, REFERENCE, declared_target, iterations
from pytest_mlir_snippets.model.record import ItemRecord
from pytest_mlir_snippets.paths import write_atomic
from pytest_mlir_snippets.protocol import Stage, SubjectKind
from pytest_mlir_snippets.worker.benchstats import BLOCK, BLOCK_SLOWED, FIGURES, SLOWED, STATS

PLOT = "speedup.png"
MEASURES = ("correctness", "benchmark", "pytorch")  # stages after which a run's tables are rewritten


def named(name: str, suffix: str) -> str:
    """``benchmark.md`` -> ``benchmark.cuda.md`` for another target than the run's own."""
    stem, dot, ext = name.rpartition(".")
    return f"{stem}{suffix}{dot}{ext}" if suffix else name


def render_iteration(folder: Path, target: str, data: dict[str, Any]) -> str:
    """``vN/benchmark.md``: the iteration's last timing, its correctness and speedups
    (``folder``: the iteration's own folder, for its hypothesis)."""
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
    if "layout_min_ms" in data:
        lines.append(f"| memory layouts | medians {_ms(data['layout_min_ms'])}..{_ms(data['layout_max_ms'])} "
                     "(stack phase and input placement; the median above is their mean) |")
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
                 "from run to run." if data.get("fixed_layout") == 1 else ""),
              "", f"Measured {data.get('measured', '')}; the figures are kept in ../{history.FILE}.", ""]
    return "\n".join(lines)


def _hypothesis(folder: Path) -> str:
    """The first line of ``vN/hypothesis.txt``, as a table cell."""
    path = folder / "hypothesis.txt"
    said = path.read_text(errors="replace").strip().splitlines() if path.is_file() else []
    text = said[0].replace("|", "\\|") if said else "-"
    return text if len(text) <= 80 else text[:77] + "..."


def _ms(value: float) -> str:
    return f"{value:.4f}" if value < 1 else f"{value:.3f}"


def write_runs(records: list[ItemRecord], rootdir: Path, out: Path | None = None) -> list[str]:
    """The tables of every optimization run (and target) whose correctness, benchmark or
    PyTorch items are in ``records``, for runs under ``rootdir``, written there or under
    ``out`` (``mlir-snippets report --out``: the run's own history is then left as it is);
    returns the problems (a folder not writable)."""
    by_run: dict[tuple[str, str], list[ItemRecord]] = {}
    for record in records:
        if record.run:
            by_run.setdefault((record.run, record.target), []).append(record)
    problems = []
    for (run, target), found in sorted(by_run.items()):
        if any(r.stage in MEASURES for r in found):
            try:
                write_run(rootdir / run, target, found, (out or rootdir) / run)
            except OSError as error:
                problems.append(f"could not write the tables of {run}: {error.strerror or error}")
    return problems


def write_run(run: Path, target: str, records: list[ItemRecord], out: Path | None = None) -> None:
    """The tables of ``run`` (its files, where they are here) on ``target``, written
    under ``out`` (default: the run's folder), from its history there and ``records``."""
    out = out or run
    out.mkdir(parents=True, exist_ok=True)
    if out != run and not (out / history.FILE).exists() and (run / history.FILE).is_file():
        write_atomic(out / history.FILE, (run / history.FILE).read_text())  # the others' last figures
    seen: dict[tuple[str, str], ItemRecord] = {(r.function, str(r.stage)): r for r in records}
    measured = {r.function: {**r.benchmark, "digest": r.info.digest or "", "measured": r.info.measured or ""}
                for r in records if r.stage in ("benchmark", "pytorch") and r.kind == "pass" and r.benchmark}
    verdicts: dict[str, dict[str, str]] = {}
    for r in records:
        if r.stage in ("correctness", *CHECKS):
            verdicts.setdefault(r.function, {})[r.stage] = r.kind
    stored = history.update(out, target, measured, verdicts)
    suffix = "" if target == declared_target(run) else f".{target}"
    pytorch = seen.get(("pytorch", "pytorch")) or _earlier_pytorch(stored.get(history.PYTORCH))
    names = [f.name for f in iterations(run)] if run.is_dir() else sorted(
        {r.function for r in records if r.subject_kind == SubjectKind.ITERATION}, key=lambda name: int(name[1:]))
    rows = []
    for folder in (run / name for name in names):
        data = dict(stored.get(folder.name, {}))
        bench = seen.get((folder.name, "benchmark"))
        if bench is not None and bench.kind != "pass":
            data = {k: v for k, v in data.items() if k not in FIGURES}  # stale figures are not this session's
            data["benchmark"] = bench.kind
        failed = [f"{stage} {kind}" for stage, kind in data.get("stages", {}).items()
                  if stage in CHECKS and kind != "pass"]
        data["checks"] = ", ".join(failed) if failed else ("pass" if any(c in data.get("stages", {}) for c in CHECKS)
                                                           else "not run")
        data["correctness"] = data.get("stages", {}).get("correctness", "not run")
        rows.append((folder, data))
    base = next((d.get("median_ms") for f, d in rows if f.name == "v0"), None)
    figures = pytorch.benchmark if pytorch is not None else {}
    eager, compiled = figures.get("eager_median_ms"), figures.get("compile_median_ms")
    for folder, data in rows:
        median = data.get("median_ms")
        if not median:
            continue
        for key, reference in (("speedup_v0", base), ("speedup_eager", eager), ("speedup_compile", compiled)):
            if reference:
                data[key] = float(reference) / float(median)
        (out / folder.name).mkdir(exist_ok=True)
        write_atomic(out / folder.name / named("benchmark.md", suffix), render_iteration(folder, target, data))
    best = min(((f, d) for f, d in rows if d.get("correctness") == "pass" and d.get("checks") in ("pass", "not run")
                and d.get("median_ms")),
               key=lambda fd: float(fd[1]["median_ms"]), default=None)
    for name, source in (("best_pipeline.txt", "pass_pipeline.txt"), ("best_transform.mlir", "transform.mlir")):
        path = out / named(name, suffix)
        if best is not None and (best[0] / source).is_file():
            write_atomic(path, (best[0] / source).read_text())
        elif path.exists():
            path.unlink()  # no correct iteration: no best, not a stale one
    reasons = sorted({r.message for r in records if r.outcome == "skipped" and r.message})
    # PyTorch's times on the plot's axis (speedup vs v0): where its lines are drawn
    levels = {label: float(base) / float(ref) for label, ref in (("PyTorch eager", eager), ("torch.compile", compiled))
              if base and ref}
    plotted = plot(out / named(PLOT, suffix), rows, run.name, target, levels)
    text = render(run, target, rows, best, pytorch, plotted, reasons, named(PLOT, suffix))
    write_atomic(out / named("benchmark.md", suffix), text)


def render(run: Path, target: str, rows: list[tuple[Path, dict[str, Any]]], best: tuple[Path, dict[str, Any]] | None,
           pytorch: ItemRecord | None, plotted: str, reasons: list[str], plot_name: str) -> str:
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
    head += " hypothesis |"
    sep += "---|"
    lines += [head, sep]
    for folder, data in rows:
        cells = [folder.name + (" (best)" if best and best[0] == folder else ""), str(data.get("checks")),
                 str(data.get("correctness"))]
        cells += [_ms(float(data[k])) if k in data else "-" for k in STATS[:-1]]
        cells.append(str(int(data["samples"])) if "samples" in data else "-")
        cells.append(f"{int(data['slowed'])} of {int(data['slowed'] + data.get('samples', 0))}"
                     if "slowed" in data else "-")
        cells[-1] += " (unsettled)" if data.get("settled") == 0 else ""
        keys = ["speedup_v0"] + (["speedup_eager", "speedup_compile"] if pytorch else [])
        cells += [f"{data[k]:.2f}x" if k in data else "-" for k in keys]
        cells.append(_hypothesis(folder))
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "samples: the timed calls the statistics are over; left out: N of M timed calls were made while "
              "the CPU ran slowed (another tenant of a shared machine) and are not in the statistics "
              "(vN/benchmark.md gives the median of all M); figures of an iteration this run did not measure "
              "(-k) are its last ones, kept in benchmarks.json.", ""]
    lines += [f"Skipped: {reason}" for reason in reasons] + ([""] if reasons else [])
    if pytorch:
        earlier = f" (measured {pytorch.info.earlier}, not in this run)" if pytorch.info.earlier is not None else ""
        lines += [f"PyTorch reference ({REFERENCE}): eager {_figure(pytorch, 'eager')}, "
                  f"torch.compile {_figure(pytorch, 'compile', pytorch.info.compile_error)}{earlier}.", ""]
    lines.append(f"Best: {best[0].name} ({_ms(float(best[1]['median_ms']))} ms); best_pipeline.txt and "
                 f"best_transform.mlir are its files." if best else
                 "Best: none (no correct iteration with a benchmark); no best_* files.")
    lines += ["", f"![speedup]({plot_name})" if plotted == "" else f"Plot not written: {plotted}", ""]
    return "\n".join(lines)


def _earlier_pytorch(entry: dict[str, Any] | None) -> ItemRecord | None:
    """The PyTorch figures of an earlier session (a partial run, ``-k v2``, has no
    ``pytorch[benchmark]`` item), as a record that says when they were measured."""
    if not entry or not any(k in entry for k in history.PYTORCH_FIGURES):
        return None
    record = ItemRecord("", "pytorch[benchmark]", "", "pytorch", Stage.PYTORCH, subject_kind=SubjectKind.PYTORCH)
    record.benchmark = {k: entry[k] for k in history.PYTORCH_FIGURES if k in entry}
    record.info.earlier = str(entry.get("measured", "an earlier run"))
    return record


def _figure(pytorch: ItemRecord, name: str, error: str | None = None) -> str:
    value = pytorch.benchmark.get(f"{name}_median_ms")
    if value:
        return f"{_ms(float(value))} ms"
    return error or pytorch.message or "not measured"


def plot_title(run: str, target: str, plotted: list[dict[str, Any]]) -> str:
    """The plot's title: the run and its target, what the bars are, and what grey means
    when a bar is grey."""
    title = f"{run} on {target}: speedup of each iteration vs v0"
    return title + ("\ngrey = not correct" if any(d.get("correctness") != "pass" for d in plotted) else "")


def plot(path: Path, rows: list[tuple[Path, dict[str, Any]]], run: str, target: str,
         levels: dict[str, float]) -> str:
    """A bar per iteration: its speedup against v0 (incorrect ones grey and hatched), and
    a dashed line per PyTorch reference measured (``levels``: its speedup against v0), so
    an eager PyTorch faster than every iteration shows above the bars.
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
    figure, axes = plt.subplots(figsize=(1.2 * len(measured) + 3, 3.8))
    for i, (_, data) in enumerate(measured):
        correct = data.get("correctness") == "pass"
        axes.bar(i, data["speedup_v0"], color="tab:blue" if correct else "lightgrey",
                 hatch="" if correct else "//", edgecolor="black")
    axes.set_xticks(range(len(measured)), [name for name, _ in measured])
    axes.axhline(1.0, color="black", linewidth=0.8)
    for (label, level), (color, style) in zip(levels.items(), (("tab:red", "--"), ("tab:orange", ":")), strict=False):
        axes.axhline(level, color=color, linestyle=style, linewidth=1.5, label=f"{label} ({level:.2f}x v0)")
    if levels:
        axes.legend(loc="best", fontsize="small")
    axes.set_ylabel("speedup vs v0 (median)")
    axes.set_title(plot_title(run, target, [d for _, d in measured]), fontsize="medium")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return ""
