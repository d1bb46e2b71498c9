"""What the sandbox costs per item, against the same work done in process.

    python bench/isolation.py [--repeat 50]

Measures in one run, medians in milliseconds:
- a compile and an execute request answered from the worker's compile cache,
  in process (``Worker.handle``) and through the sandbox (pipe, pickle, fd capture);
- a fresh compile (new snippet each time), in process and through the sandbox;
- a worker restart: start, imports, device opened; and a crash: the segfaulting
  request (compile included) plus that restart.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from pytest_mlir_snippets.client import Sandbox
from pytest_mlir_snippets.protocol import Kind, Op, Options, Request
from pytest_mlir_snippets.worker.loop import Worker

SNIPPET = """func.func @add_{n}(%a: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {{
  %0 = arith.addf %a, %b : tensor<64xf32>
  %1 = math.exp %0 : tensor<64xf32>
  return %1 : tensor<64xf32>
}}
"""
CRASH = """func.func @wild(%t: tensor<4xf32>) -> f32 {
  %far = arith.constant 1099511627776 : index
  %0 = tensor.extract %t[%far] : tensor<4xf32>
  return %0 : f32
}
"""


def median_ms(fn: Callable[[int], object], repeat: int) -> float:
    samples = []
    for i in range(repeat):
        start = time.perf_counter()
        fn(i)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def request(op: Op, n: int = 0, text: str | None = None) -> Request:
    return Request(op, text or SNIPPET.format(n=n), f"add_{n}" if text is None else "wild", Options())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    repeat = parser.parse_args().repeat

    worker = Worker("cpu")
    sandbox = Sandbox("cpu")
    for target in (worker.handle, lambda r: sandbox.call(r, 60)):  # warm both: imports, first compile
        assert target(request(Op.COMPILE)).ok and target(request(Op.EXECUTE)).ok

    rows: list[tuple[str, float, float]] = []
    for label, op in (("cached compile", Op.COMPILE), ("execute (cached compile)", Op.EXECUTE)):
        inproc = median_ms(lambda _, op=op: worker.handle(request(op)), repeat)
        boxed = median_ms(lambda _, op=op: sandbox.call(request(op), 60), repeat)
        rows.append((label, inproc, boxed))
    fresh = iter(range(1, 10**6))
    inproc = median_ms(lambda _: worker.handle(request(Op.COMPILE, next(fresh))), repeat // 2)
    boxed = median_ms(lambda _: sandbox.call(request(Op.COMPILE, next(fresh)), 60), repeat // 2)
    rows.append(("fresh compile", inproc, boxed))
    ping = median_ms(lambda _: sandbox.ping(60), repeat)

    def restart(_: int) -> None:  # what follows a crash: a new worker opens (and probes) its device
        sandbox.close()
        assert sandbox.open_device(Options(), 60).ok

    restart_ms = median_ms(restart, max(5, repeat // 10))

    def crash(_: int) -> None:
        assert sandbox.call(request(Op.EXECUTE, text=CRASH), 60).kind is Kind.CRASH
        assert sandbox.open_device(Options(), 60).ok

    crash_ms = median_ms(crash, max(5, repeat // 10))
    sandbox.close()

    print(f"{'per item (median ms)':32} {'in process':>11} {'sandbox':>9} {'overhead':>9} {'ratio':>6}")
    for label, a, b in rows:
        print(f"{label:32} {a:11.2f} {b:9.2f} {b - a:9.2f} {b / a:6.2f}")
    print(f"{'sandbox round trip (ping)':32} {'':11} {ping:9.2f}")
    print(f"{'worker restart (device open)':32} {'':11} {restart_ms:9.1f}")
    print(f"{'crash: segfault + restart':32} {'':11} {crash_ms:9.1f}")


if __name__ == "__main__":
    main()
