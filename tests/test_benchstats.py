"""Timing statistics: calls made while the CPU ran slowed are left out, and said so."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from pytest_mlir_snippets import children
from pytest_mlir_snippets.protocol import Options
from pytest_mlir_snippets.worker import benchstats

BLOCK = benchstats.BLOCK


def test_calls_whose_probes_ran_slowed_are_left_out() -> None:
    samples = [1.0] * 2 * BLOCK + [2.0] * 3 * BLOCK  # the slow calls are the majority
    probes = [1000] * 2 * BLOCK + [1900] * 3 * BLOCK
    stats = benchstats.summarize(samples, probes)
    assert stats["median_ms"] == 1.0 and stats["samples"] == 2 * BLOCK
    assert stats["slowed"] == 3 * BLOCK and stats["median_all_ms"] == 2.0 and stats["settled"] == 1


def test_a_fast_probe_inside_a_slowed_block_does_not_count() -> None:
    """A probe is a moment: within a spell some probes still run fast; their calls do not count."""
    probes = np.array([1000] * BLOCK + [1900, 1000] * (BLOCK // 2) + [1000] * 7)
    counted = benchstats.counted(probes, 1000)
    assert counted[:BLOCK].all() and not counted[BLOCK:2 * BLOCK].any()
    assert counted[2 * BLOCK:].all()  # the last, short block counts on its own


def test_blocks_of_slowed_calls_do_not_count_even_with_fast_probes() -> None:
    """Some spells slow the calls (1.4x) and not the probe: a block whose median call took
    over BLOCK_SLOWED times the usual block's does not count; nor, when the same code was
    measured before, one over BLOCK_SLOWED times that."""
    samples = np.array([1.0] * 3 * BLOCK + [1.4] * BLOCK + [1.0] * 6 * BLOCK)
    probes = np.full(len(samples), 1000.0)
    counted = benchstats.counted(probes, 1000, samples)
    assert counted.sum() == 9 * BLOCK and not counted[3 * BLOCK:4 * BLOCK].any()
    assert not benchstats.counted(probes, 1000, samples, expected=0.7).any()
    assert benchstats.counted(probes, 1000, samples, expected=2.0).sum() == 9 * BLOCK


def test_a_slower_memory_layout_is_not_a_slowed_cpu() -> None:
    """Blocks take turns over layouts (jit.Placements); one layout 1.3x slower than the
    other for good is judged against its own usual block, and the figure is the mean of
    the layouts' medians, not a median that jumps between the two; a spell in one still goes."""
    layouts = 2
    samples = np.tile(np.repeat([1.0, 1.3], BLOCK), 8)
    samples[4 * BLOCK:5 * BLOCK] = 1.5  # a slowed block of the first layout
    probes = np.full(len(samples), 1000.0)
    counted = benchstats.counted(probes, 1000, samples, layouts=layouts)
    assert counted.sum() == 15 * BLOCK and not counted[4 * BLOCK:5 * BLOCK].any()
    assert benchstats.counted(probes, 1000, samples, expected=1.15, layouts=layouts).sum() == 15 * BLOCK
    stats = benchstats.summarize(list(samples), list(probes), usual=1000, layouts=layouts)
    assert stats["median_ms"] == pytest.approx(1.15) and stats["slowed"] == BLOCK
    assert (stats["layout_min_ms"], stats["layout_max_ms"]) == (1.0, 1.3)
    one_layout = benchstats.summarize(list(samples), list(probes), usual=1000)
    assert one_layout["median_ms"] == 1.0  # with one layout, the slower one would be a slowed CPU


def test_the_timed_calls_start_with_the_first_layout_after_the_warm_up() -> None:
    """jit.Placements counts calls to change layouts; the warm-up's must not shift the
    timed calls off the blocks benchstats judges (``begin`` restarts the count)."""
    events: list[str] = []
    options = Options(bench_warmup=3, bench_time=0.001, bench_settle=0)
    benchstats.measure(lambda: events.append("run"), options, after=lambda: events.append("after"),
                       begin=lambda: events.append("begin"), layouts=2)
    assert events[:7] == ["run", "after"] * 3 + ["begin"] and events[7] == "run"


def test_a_run_that_never_ran_at_the_usual_speed_keeps_every_sample() -> None:
    samples = [2.0] * 40
    # this process saw probes of 1000 ns before: all of these (1900) are slowed, too many to drop
    stats = benchstats.summarize(samples, [1900] * 40, usual=1000, settled=False)
    assert stats["samples"] == 40 and stats["slowed"] == 0 and stats["median_ms"] == 2.0
    assert stats["settled"] == 0
    assert benchstats.summarize([1.0, 3.0], None)["median_ms"] == 2.0


def _busy() -> None:
    sum(range(300))


class VirtualClock:
    """benchstats' clock (``_clock``, ns), moved on by the timed calls themselves: what a
    timing test asserts then does not depend on how busy the machine is (on a shared CI
    machine a real 0.2 ms call takes what it takes)."""

    def __init__(self) -> None:
        self.ns = 0

    def __call__(self) -> int:
        return self.ns

    def spend(self, seconds: float) -> None:
        self.ns += int(seconds * 1e9)

    @property
    def seconds(self) -> float:
        return self.ns / 1e9


def test_timing_goes_on_while_it_has_seen_one_speed_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run whose probes all look alike, in a process that has seen no probe yet, may be
    wholly in a slow spell: it is timed up to bench_settle longer, and says it did not settle."""
    monkeypatch.setattr(benchstats, "_fastest", [0])
    monkeypatch.setattr(benchstats, "_probe", lambda: 1000)
    clock = VirtualClock()
    monkeypatch.setattr(benchstats, "_clock", clock)
    options = Options(bench_warmup=0, bench_time=0.05, bench_settle=0.3)
    stats = benchstats.measure(lambda: clock.spend(0.0001), options)
    assert 0.35 <= clock.seconds < 1.0
    assert stats["settled"] == 0
    assert benchstats._fastest == [1000]
    start = clock.seconds  # the usual speed is known now: no extra time
    stats = benchstats.measure(lambda: clock.spend(0.0001), options)
    assert clock.seconds - start < 0.2 and stats["settled"] == 1


def test_the_time_asked_shrinks_to_what_a_short_kernel_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The warm-up times the kernel: a 20 µs call has 8 blocks of 32 calls per layout long
    before the second asked for (it stops at MIN_TIME), a 2 ms call does not (it takes it)."""
    monkeypatch.setattr(benchstats, "_fastest", [1000])
    monkeypatch.setattr(benchstats, "_probe", lambda: 1000)
    for call, layouts, low, high in ((0.00002, 8, benchstats.MIN_TIME, 0.06), (0.002, 8, 1.0, 1.1),
                                     (0.0005, 1, benchstats.MIN_TIME, 0.15)):
        clock = VirtualClock()
        monkeypatch.setattr(benchstats, "_clock", clock)
        stats = benchstats.measure(lambda c=call, k=clock: k.spend(c), Options(bench_warmup=5, bench_time=1.0,
                                                                           bench_settle=0), layouts=layouts)
        timed = clock.seconds - 5 * call
        assert low - 1e-6 <= timed <= high, (call, timed)
        assert stats["samples"] >= min(benchstats.ENOUGH_BLOCKS * benchstats.BLOCK * layouts, 1.0 / call)


@pytest.mark.parametrize(("cpu_share", "settled", "low", "high"), [(1.0, 1, 0.05, 0.06), (0.5, 0, 0.35, 0.5)])
def test_a_run_that_had_the_cpu_all_along_settles_on_its_one_speed(monkeypatch: pytest.MonkeyPatch, cpu_share: float,
                                                                    settled: int, low: float, high: float) -> None:
    """A process's first timing sees one probe speed; when its thread had the CPU the whole
    time (CPU time = wall time), that speed is the usual one: no settling time. Descheduled
    for half of it (another tenant ran), it keeps timing to see a second speed."""
    monkeypatch.setattr(benchstats, "_fastest", [0])
    monkeypatch.setattr(benchstats, "_probe", lambda: 1000)
    clock = VirtualClock()
    cpu = [0]

    def spend(seconds: float) -> None:
        clock.spend(seconds)
        cpu[0] += int(cpu_share * seconds * 1e9)

    monkeypatch.setattr(benchstats, "_clock", clock)
    monkeypatch.setattr(benchstats, "_cpu_clock", lambda: cpu[0])
    stats = benchstats.measure(lambda: spend(0.0001), Options(bench_warmup=0, bench_time=0.05, bench_settle=0.3))
    assert stats["settled"] == settled and low <= clock.seconds < high, clock.seconds


def test_timing_waits_for_the_usual_speed_and_keeps_only_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first 0.2 s run slowed (the probe and the call); then the CPU is back to its speed."""
    monkeypatch.setattr(benchstats, "_fastest", [0])
    clock = VirtualClock()
    monkeypatch.setattr(benchstats, "_clock", clock)

    def slowed() -> bool:
        return clock.seconds < 0.2

    monkeypatch.setattr(benchstats, "_probe", lambda: 2000 if slowed() else 1000)

    def run() -> None:
        clock.spend(0.0004 if slowed() else 0.0002)

    stats = benchstats.measure(run, Options(bench_warmup=0, bench_time=0.1, bench_settle=2.0))
    took = clock.seconds
    assert 0.2 < took < 1.0 and stats["settled"] == 1
    assert stats["slowed"] > 0 and stats["median_ms"] < 0.35 < stats["median_all_ms"]
    assert stats["samples"] >= benchstats.SHARE * 0.1 / 0.0004


def test_a_run_much_slower_than_the_last_measurement_keeps_timing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(benchstats, "_fastest", [1000])  # the probe's usual time is known
    monkeypatch.setattr(benchstats, "_probe", lambda: 1000)
    clock = VirtualClock()  # calls of exactly 0.2 ms, however busy the machine is
    monkeypatch.setattr(benchstats, "_clock", clock)
    options = Options(bench_warmup=0, bench_time=0.05, bench_settle=0.3, bench_previous_ms=0.1)
    start = clock.seconds
    stats = benchstats.measure(lambda: clock.spend(0.0002), options)  # twice as slow as last time
    assert clock.seconds - start >= 0.35 and stats["settled"] == 0
    assert stats["median_ms"] >= 0.2 and stats["samples"] > 100  # reported as measured, not dropped
    options.bench_previous_ms = 0.19  # 5% slower: every block counts, and the run waits for more
    start = clock.seconds
    stats = benchstats.measure(lambda: clock.spend(0.0002), options)
    assert clock.seconds - start >= 0.35 and stats["settled"] == 0 and stats["slowed"] == 0
    options.bench_previous_ms = 0.198
    start = clock.seconds
    stats = benchstats.measure(lambda: clock.spend(0.0002), options)
    assert clock.seconds - start < 0.2 and stats["settled"] == 1


def test_real_probes_on_this_machine() -> None:
    stats = benchstats.measure(lambda: sum(range(1000)), Options(bench_warmup=3, bench_time=0.05, bench_settle=0.5))
    assert stats["samples"] >= benchstats.MIN_SAMPLES
    assert stats["min_ms"] <= stats["median_ms"] <= stats["max_ms"]
    assert stats["samples"] + stats["slowed"] >= benchstats.MIN_SAMPLES


def _stack(before_exec: Callable[[], None] | None) -> str:
    maps = subprocess.run(["cat", "/proc/self/maps"], preexec_fn=before_exec, capture_output=True, text=True,
                          check=True).stdout
    return next(line.split()[0] for line in maps.splitlines() if line.endswith("[stack]"))


@pytest.mark.skipif(not Path("/proc/self/personality").is_file(), reason="Linux: /proc/self/personality")
def test_workers_get_the_same_memory_layout_every_time() -> None:
    """Where a process's stack, heap and code sit moves a kernel's time for the process's life;
    the sandbox starts workers without address-space randomization, and the worker can tell."""
    fix = children.fixed_layout_hook()
    told = subprocess.run([sys.executable, "-c", "from pytest_mlir_snippets.worker import benchstats; "
                           "print(benchstats.fixed_layout())"], preexec_fn=fix, capture_output=True, text=True)
    if told.stdout.strip() != "True":
        pytest.skip("this kernel does not let a process turn address-space randomization off")
    assert _stack(fix) == _stack(fix) == _stack(fix)
    if Path("/proc/sys/kernel/randomize_va_space").read_text().strip() != "0":
        assert len({_stack(None) for _ in range(3)}) > 1  # randomized: three stacks, not all at one place
