"""Timing: warm-up, repeated samples on a monotonic clock, and their statistics.

Shared machines (a VM whose core another tenant also runs on, a host that preempts it)
run everything slower for tens of milliseconds to a second at a time, so a median over
all samples depends on how much of the run fell in such spells (medians of the same
kernel 15-35% apart between runs on a 2-vCPU VM). Each call is bracketed by a fixed
probe (a few microseconds of interpreter work, best of three so that the caches the
call took do not count); calls whose probes took more than SLOWED times the usual probe
time (the fastest this process has seen) are left out of the statistics, and the report
says how many, with the median over all samples beside it. Timing goes on past the time
asked for (by at most EXTRA_S, or twice that time) until MIN_SAMPLES calls ran at the
usual speed and the run has either seen it before or seen two speeds; otherwise every
sample is kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable

STATS = ("median_ms", "p20_ms", "p80_ms", "min_ms", "max_ms", "std_ms", "samples")
NOISE = ("slowed", "median_all_ms")
FIGURES = STATS + NOISE  # all a measurement reports
MIN_SAMPLES = 20
SLOWED = 1.25
EXTRA_S = 2.0
_clock = time.perf_counter_ns
_fastest = [0]  # the fastest probe this process has seen (0: none yet): the CPU's usual speed


def _probe() -> int:
    best = 1 << 62
    for _ in range(3):
        start = _clock()
        sum(range(200))
        best = min(best, _clock() - start)
    return best


def _settled(probes: list[int]) -> bool:
    """Enough calls ran at the usual speed, and the fastest probe is the usual speed: this
    process saw it before, or this run saw a second, slower one (a run spent wholly in a
    slow spell sees one speed)."""
    low = min(probes)
    if sum(1 for p in probes if p <= SLOWED * low) < MIN_SAMPLES:
        return False
    return low <= SLOWED * _fastest[0] or sum(1 for p in probes if p > 1.5 * low) >= 0.05 * len(probes)


def measure(run: Callable[[], None], warmup: int, seconds: float, max_samples: int = 10_000,
            after: Callable[[], None] | None = None) -> dict[str, float]:
    """``warmup`` untimed calls, then timed calls for ``seconds`` and until the timing
    has settled (at most ``max_samples`` calls); ``after`` runs after each call, untimed
    (freeing what it returned)."""
    after = after or (lambda: None)
    for _ in range(warmup):
        run()
        after()
    samples: list[int] = []
    probes: list[int] = []
    check = _clock() + int(seconds * 1e9)  # the deadline, then every 50 ms
    give_up = check + int(min(2 * seconds, EXTRA_S) * 1e9)
    while len(samples) < max_samples:
        if len(samples) >= MIN_SAMPLES and (now := _clock()) >= check:
            if now >= give_up or _settled(probes):
                break
            check = now + 50_000_000
        before = _probe()
        start = _clock()
        run()
        samples.append(_clock() - start)
        probes.append(max(before, _probe()))
        after()
    _fastest[0] = min(_fastest[0] or probes[0], *probes)
    return summarize([s / 1e6 for s in samples], probes, _fastest[0])


def summarize(samples_ms: list[float], probes: list[int] | None = None, usual: float = 0) -> dict[str, float]:
    """Statistics of the samples whose probes ran at the usual speed (``usual``, else the
    fastest probe); all of them without probes, or when fewer than MIN_SAMPLES would be left."""
    import numpy as np

    everything = np.asarray(samples_ms, dtype=np.float64)
    data = everything
    if probes and len(probes) == len(everything):
        times = np.asarray(probes, dtype=np.float64)
        kept = everything[times <= SLOWED * (usual or times.min())]
        data = kept if len(kept) >= MIN_SAMPLES else everything
    return {"median_ms": float(np.median(data)), "p20_ms": float(np.percentile(data, 20)),
            "p80_ms": float(np.percentile(data, 80)), "min_ms": float(data.min()), "max_ms": float(data.max()),
            "std_ms": float(data.std()), "samples": float(len(data)),
            "slowed": float(len(everything) - len(data)), "median_all_ms": float(np.median(everything))}
