"""Timing: warm-up, repeated samples on a monotonic clock, and their statistics."""

from __future__ import annotations

import time
from collections.abc import Callable

STATS = ("median_ms", "p20_ms", "p80_ms", "min_ms", "max_ms", "std_ms", "samples")
MIN_SAMPLES = 20


def measure(run: Callable[[], None], warmup: int, seconds: float, max_samples: int = 10_000,
            after: Callable[[], None] | None = None) -> dict[str, float]:
    """``warmup`` untimed calls, then timed calls until ``seconds`` have passed and at
    least MIN_SAMPLES were taken (at most ``max_samples``); ``after`` runs after each
    call, untimed (freeing what the call returned)."""
    after = after or (lambda: None)
    for _ in range(warmup):
        run()
        after()
    samples: list[float] = []
    clock = time.perf_counter_ns
    deadline = clock() + int(seconds * 1e9)
    while len(samples) < max_samples and (len(samples) < MIN_SAMPLES or clock() < deadline):
        start = clock()
        run()
        samples.append((clock() - start) / 1e6)
        after()
    return summarize(samples)


def summarize(samples_ms: list[float]) -> dict[str, float]:
    import numpy as np

    data = np.asarray(samples_ms, dtype=np.float64)
    return {"median_ms": float(np.median(data)), "p20_ms": float(np.percentile(data, 20)),
            "p80_ms": float(np.percentile(data, 80)), "min_ms": float(data.min()), "max_ms": float(data.max()),
            "std_ms": float(data.std()), "samples": float(len(data))}
