"""Timing: warm-up, repeated samples on a monotonic clock, and their statistics.

Shared machines (a VM whose core another tenant also runs on) run everything slower,
1.2-2x, for spells of milliseconds to tens of seconds, so a median over all samples
depends on how much of the run fell in such spells (medians of the same kernel up to
45% apart between runs on a 2-vCPU VM). Each call is bracketed by a fixed probe (a few
microseconds of interpreter work, best of three so that the caches the call took do not
count). A call counts when its probes took at most SLOWED times the usual probe time
(the fastest this process has seen) and it falls in a block of BLOCK calls most of whose
probes did (a probe is a moment; a spell lasts longer than a block) and whose median
call took at most BLOCK_SLOWED times the usual block's (some spells slow the calls,
1.05-1.4x, and not the probe). The others are left out of the statistics; the report
says how many, with the median over all samples beside it. Timing goes on past the time asked
for, by at most ``bench_settle`` seconds, until it has settled: the calls that count
are at least SHARE of those timed in the time asked for, the run has either seen the
usual probe time before, seen two (a run wholly in a slow spell sees one), or had the
CPU all along (its thread's CPU time is the wall time: no one ran in its place), and, when
the same code was measured before on this machine (``bench_previous_ms``), they ran
within BLOCK_SLOWED times that and their median within AGREES times it (a spell that
slows a whole run a few percent shows in no probe). The report says whether it settled
(``settled``).

Where code, stack and buffers sit in memory also moves a kernel's time, by up to ~10%,
for a process's whole life; the sandbox starts workers with address-space randomization
off, so that every run has the same layout, and the report says whether it was
(``fixed_layout``). Where the inputs and the stack sit relative to each other moves some
kernels' time by up to 1.3x: the calls take turns over several layouts (``layouts``, set
by ``jit.Placements``), each layout's blocks are judged against that layout's usual block,
and the figure is the mean of the layouts' medians (``typical``). A run has settled only
once every layout has counted calls.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

from pytest_mlir_snippets.children import ADDR_NO_RANDOMIZE

if TYPE_CHECKING:  # numpy where it is used: the pytest process reads only this module's constants
    import numpy as np

    from pytest_mlir_snippets.protocol import Options

# how a figure is measured, part of a measurement's digest (model/history.py): a figure
# measured another way is not the one to compare a new measurement with
METHOD = "layouts-8-mean-of-medians"
STATS = ("median_ms", "p20_ms", "p80_ms", "min_ms", "max_ms", "std_ms", "samples")
NOISE = ("slowed", "median_all_ms", "settled", "fixed_layout", "layout_min_ms", "layout_max_ms")
FIGURES = STATS + NOISE  # all a measurement reports
MIN_SAMPLES = 20
SLOWED = 1.25  # a probe over this many times the usual one: the CPU ran slowed
BLOCK_SLOWED = 1.1  # a block's median call over this many times the usual block's: slowed
BLOCK = 32  # calls; jit.Placements keeps one placement for a block
STEADY = 0.75  # a block counts when this share of its probes ran at the usual speed
AGREES = 1.03  # settled: the median within this many times the same code's last settled one
SHARE = 0.3  # settled: the calls that count are at least this share of those timed in the time asked
# the time asked ends early once the warm-up says this many blocks per layout fit in it: a
# short kernel has its statistics in well under a second (and settles from there)
ENOUGH_BLOCKS = 8
MIN_TIME = 0.05  # seconds: never less timing than this
RAN_THROUGHOUT = 0.98  # the thread's CPU time over the wall time: it had the CPU all along
_clock = time.perf_counter_ns
_cpu_clock = time.thread_time_ns  # this thread's CPU time
_fastest = [0]  # the fastest probe this process has seen (0: none yet): the CPU's usual speed


def _probe() -> int:
    best = 1 << 62
    for _ in range(3):
        start = _clock()
        sum(range(200))
        best = min(best, _clock() - start)
    return best


def fixed_layout() -> bool:
    """Whether this process runs without address-space randomization (Linux; False elsewhere)."""
    try:
        with open("/proc/self/personality") as flags:
            return bool(int(flags.read(), 16) & ADDR_NO_RANDOMIZE)
    except (OSError, ValueError):
        return False


def counted(probes: np.ndarray, usual: float, samples: np.ndarray | None = None, expected: float = 0,
            layouts: int = 1) -> np.ndarray:
    """Which calls count: their probes ran at the usual speed, and so did most of their
    block's; with ``samples``, the block's median call also took at most BLOCK_SLOWED times
    the usual block's (the 10th percentile of the blocks', or ``expected`` if lower):
    some slow spells slow the calls but not the probe. ``layouts``: blocks take turns
    over that many memory layouts (``jit.Placements``), each judged against its own
    usual block (``expected`` scaled to its share), since a layout can be slower than
    another for good."""
    import numpy as np

    fast = probes <= SLOWED * usual
    if not len(fast):
        return fast
    starts = np.arange(0, len(fast), BLOCK)
    sizes = np.diff(np.append(starts, len(fast)))
    steady = np.add.reduceat(fast.astype(np.int64), starts) >= STEADY * sizes
    if samples is not None and steady.any():
        grid = np.full(len(starts) * BLOCK, np.nan)
        grid[:len(fast)] = np.where(fast, samples, np.nan)
        with warnings.catch_warnings():  # a block without a fast probe has no median: it is not steady anyway
            warnings.simplefilter("ignore", RuntimeWarning)
            medians = np.nanmedian(grid.reshape(-1, BLOCK), axis=1)
        layout = np.arange(len(starts)) % layouts
        usual_blocks = {g: float(np.percentile(medians[steady & (layout == g)], 10))
                        for g in range(layouts) if (steady & (layout == g)).any()}
        share = float(np.mean(list(usual_blocks.values())))
        limit = np.full(len(starts), np.inf)
        for g, usual_block in usual_blocks.items():
            own = expected * usual_block / share if expected else 0
            limit[layout == g] = BLOCK_SLOWED * (min(usual_block, own) if own else usual_block)
        steady &= medians <= limit
    return fast & np.repeat(steady, sizes)


def layout_medians(samples: np.ndarray, keep: np.ndarray, layouts: int) -> list[float]:
    """The median of each layout's kept calls (blocks of BLOCK calls take turns over
    ``layouts`` layouts), for the layouts with at least MIN_SAMPLES of them."""
    import numpy as np

    layout = np.arange(len(samples)) // BLOCK % layouts
    chosen = [samples[keep & (layout == g)] for g in range(layouts)]
    return [float(np.median(c)) for c in chosen if len(c) >= MIN_SAMPLES]


def typical(samples: np.ndarray, keep: np.ndarray, layouts: int = 1) -> tuple[float, list[float]]:
    """The figure a run reports, with the layouts' medians it comes from: the mean over
    the layouts of each one's median call (a kernel can be 1.3x slower in some layouts for
    as long as they last, and a median over all calls would jump between the modes); the
    median of the kept calls with one layout (and no layout medians)."""
    import numpy as np

    medians = layout_medians(samples, keep, layouts) if layouts > 1 else []
    return (float(np.mean(medians)) if medians else float(np.median(samples[keep]))), medians


def _usual(probes: np.ndarray) -> float:
    return float(min(_fastest[0] or probes.min(), probes.min()))


def _settled(samples: np.ndarray, probes: np.ndarray, needed: int, expected: float, layouts: int,
             ran_throughout: bool = False) -> bool:
    """Enough calls count (within BLOCK_SLOWED times ``expected`` ns, when known, and their median
    within AGREES times it), and the fastest probe is the usual speed: this process saw it
    before, this run saw a second, slower one, or it had the CPU all along (``ran_throughout``)."""
    import numpy as np

    keep = counted(probes, _usual(probes), samples, expected, layouts)
    if keep.sum() < max(MIN_SAMPLES, needed):
        return False
    figure, medians = typical(samples, keep, layouts)
    if (expected and figure > AGREES * expected) or (layouts > 1 and len(medians) < layouts):
        return False  # slower than before; or a figure over some layouts only, not comparable with one over all
    low = probes.min()
    return bool(ran_throughout or low <= SLOWED * _fastest[0]
                or np.count_nonzero(probes > 1.5 * low) >= 0.05 * len(probes))


def _ran_throughout(wall_ns: int, cpu_ns: int) -> bool:
    """Whether the timing thread had a CPU all the time it took: neither another process of
    this machine nor the hypervisor (steal) took it, so the speed it saw is the usual one
    (a slow spell of a shared machine is time some other tenant ran)."""
    return wall_ns > 0 and cpu_ns >= RAN_THROUGHOUT * wall_ns


def measure(run: Callable[[], None], options: Options, after: Callable[[], None] | None = None,
            max_samples: int = 1_000_000, layouts: int = 1,
            begin: Callable[[], None] | None = None) -> dict[str, float]:
    """``options.bench_warmup`` untimed calls, then timed calls for ``options.bench_time``
    seconds and until the timing has settled (at most ``options.bench_settle`` more, and
    ``max_samples`` calls); ``after`` runs after each call, untimed (freeing what it returned).
    ``layouts``: ``run`` takes turns over that many memory layouts, a block of BLOCK calls
    each, starting with the first at the first timed call (``begin`` runs between the
    warm-up and the timing)."""
    import numpy as np

    after = after or (lambda: None)
    warm = _clock()
    for _ in range(options.bench_warmup):
        run()
        after()
    per_call = (_clock() - warm) / max(1, options.bench_warmup)  # ns, the free-ing included
    if begin is not None:
        begin()
    samples: list[int] = []
    probes: list[int] = []
    enough = max(MIN_SAMPLES, ENOUGH_BLOCKS * BLOCK * layouts) * per_call if options.bench_warmup else float("inf")
    asked = min(options.bench_time * 1e9, max(MIN_TIME * 1e9, enough))
    wall0, cpu0 = _clock(), _cpu_clock()
    check = wall0 + int(asked)  # the deadline, then every 50 ms or more
    give_up = check + int(options.bench_settle * 1e9)
    needed = 0  # calls that must count: SHARE of those timed by the deadline
    settled = False
    while len(samples) < max_samples:
        if len(samples) >= MIN_SAMPLES and (now := _clock()) >= check:
            needed = needed or int(SHARE * len(samples))
            settled = _settled(np.asarray(samples), np.asarray(probes), needed, options.bench_previous_ms * 1e6,
                               layouts, _ran_throughout(now - wall0, _cpu_clock() - cpu0))
            if settled or now >= give_up:
                break
            done = _clock()  # a check reads every sample so far: at most 5% of the time goes to checks
            check = done + max(50_000_000, 20 * (done - now))
        before = _probe()
        start = _clock()
        run()
        samples.append(_clock() - start)
        probes.append(max(before, _probe()))
        after()
    usual = _usual(np.asarray(probes))
    _fastest[0] = int(usual)
    expected = options.bench_previous_ms if settled else 0
    return {**summarize([s / 1e6 for s in samples], probes, usual, settled, expected, layouts),
            "fixed_layout": float(fixed_layout())}


def summarize(samples_ms: list[float], probes: list[int] | None = None, usual: float = 0,
              settled: bool = True, expected_ms: float = 0, layouts: int = 1) -> dict[str, float]:
    """Statistics of the calls that count (``counted``: at the ``usual`` speed, else the
    fastest probe's); of every call without probes, or when fewer than MIN_SAMPLES would
    be left. ``settled``: whether the timing saw the usual speed long enough;
    ``expected_ms``: the figure this code had before, if known. With several ``layouts``,
    the median is ``typical``'s, and the layouts' own medians' range is given too."""
    import numpy as np

    everything = np.asarray(samples_ms, dtype=np.float64)
    keep = np.ones(len(everything), dtype=bool)
    if probes and len(probes) == len(everything):
        times = np.asarray(probes, dtype=np.float64)
        keep = counted(times, usual or float(times.min()), everything, expected_ms, layouts)
        if keep.sum() < MIN_SAMPLES:
            keep[:] = True
    data = everything[keep]
    figure, medians = typical(everything, keep, layouts)
    stats = {"median_ms": figure, "p20_ms": float(np.percentile(data, 20)),
             "p80_ms": float(np.percentile(data, 80)), "min_ms": float(data.min()), "max_ms": float(data.max()),
             "std_ms": float(data.std()), "samples": float(len(data)),
             "slowed": float(len(everything) - len(data)), "median_all_ms": float(np.median(everything)),
             "settled": float(settled)}
    if medians:
        stats |= {"layout_min_ms": min(medians), "layout_max_ms": max(medians)}
    return stats
