"""Timing statistics: calls made while the CPU ran slowed are left out, and said so."""

from __future__ import annotations

import time

import pytest

from pytest_mlir_snippets import benchstats


def test_calls_whose_probes_ran_slowed_are_left_out() -> None:
    samples = [1.0] * 30 + [2.0] * 50  # the slow calls are the majority
    probes = [1000] * 30 + [1900] * 50
    stats = benchstats.summarize(samples, probes)
    assert stats["median_ms"] == 1.0 and stats["samples"] == 30
    assert stats["slowed"] == 50 and stats["median_all_ms"] == 2.0


def test_a_run_that_never_ran_at_the_usual_speed_keeps_every_sample() -> None:
    samples = [2.0] * 40
    # this process saw probes of 1000 ns before: all of these (1900) are slowed, too many to drop
    stats = benchstats.summarize(samples, [1900] * 40, usual=1000)
    assert stats["samples"] == 40 and stats["slowed"] == 0 and stats["median_ms"] == 2.0
    assert benchstats.summarize([1.0, 3.0], None)["median_ms"] == 2.0


def test_timing_goes_on_until_it_has_settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run whose probes all look alike, in a process that has seen no probe yet, is
    timed past the time asked for (it may be wholly in a slow spell)."""
    monkeypatch.setattr(benchstats, "_fastest", [0])
    monkeypatch.setattr(benchstats, "_probe", lambda: 1000)
    calls = []
    start = time.perf_counter()
    stats = benchstats.measure(lambda: calls.append(sum(range(300))), 0, 0.05, max_samples=10**6)
    took = time.perf_counter() - start
    assert 0.15 <= took < 1.0  # 0.05 s asked, then at most twice that again
    assert stats["samples"] == len(calls) and stats["slowed"] == 0
    assert benchstats._fastest == [1000]
    start = time.perf_counter()
    # the usual speed is known now: no extra time
    benchstats.measure(lambda: calls.append(sum(range(300))), 0, 0.05, max_samples=10**6)
    assert time.perf_counter() - start < 0.12


def test_real_probes_on_this_machine() -> None:
    stats = benchstats.measure(lambda: sum(range(1000)), 3, 0.05)
    assert stats["samples"] >= benchstats.MIN_SAMPLES
    assert stats["min_ms"] <= stats["median_ms"] <= stats["max_ms"]
    assert stats["samples"] + stats["slowed"] >= benchstats.MIN_SAMPLES
