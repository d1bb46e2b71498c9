"""``stablehlo.rng`` with the ``NORMAL`` distribution, which ``stablehlo-legalize-to-linalg``
has no pattern for (``UNIFORM`` it lowers itself), as IREE's StableHLO preprocessing expands
it (``ExpandRngNormal``): a stateless Box-Muller transform whose uniform draws come from
C++'s ``std::mt19937`` seeded 0 through ``std::uniform_real_distribution<double>(0, 1)``
(two 32-bit words per draw), taken in pairs ``(u1, u2)`` as f32, a pair with ``u1 <= eps``
drawn again. For ``n`` results (rounded up to even), ``n / 2`` pairs give the constants
``-2 log u1``, ``cos(2 pi u2)`` and ``sin(2 pi u2)``; at run time ``mag = sigma * sqrt(-2 log
u1)``, the first half ``mag * cos + mu``, the second ``mag * sin + mu``, in that order, cut
to ``n`` and reshaped. The same program gives IREE's values (its e2e ``rng_normal`` test's
expected values pass); the draws themselves are fixed, not random. bf16 and f16 compute in
f32. numpy's legacy ``RandomState(0)`` is the same Mersenne Twister, seeded the same way.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_mlir_snippets.worker.lowering.shlo.build import ops_named, replace
from pytest_mlir_snippets.worker.lowering.shlo.hlo import Hlo, computed_in


def lower_all(module: Any, tir: Any) -> int:
    """Every ``rng`` NORMAL with a static result, expanded; how many."""
    found = [op for op in ops_named(module, tir, "stablehlo.rng")
             if "NORMAL" in str(op.attributes["rng_distribution"])
             and tir.RankedTensorType(op.results[0].type).has_static_shape]
    for op in found:
        with tir.InsertionPoint(op):
            result = _expand(op, tir)
        replace(op, [result])
    return len(found)


def box_muller_constants(count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``-2 log u1``, ``cos(2 pi u2)``, ``sin(2 pi u2)`` for ``count`` results (f32 each, half of
    ``count`` rounded up), from the draws of ``std::mt19937{0}`` as IREE makes them."""
    half = (count + 1) // 2
    eps = np.finfo(np.float32).eps
    spare = 8
    while True:
        words = np.random.RandomState(0).randint(0, 2**32, size=4 * (half + spare), dtype=np.uint64)
        wide = words.astype(np.float64)
        draws = (wide[0::2] + wide[1::2] * 2.0**32) / 2.0**64  # generate_canonical<double, 53>: two words
        pairs = np.minimum(draws, np.nextafter(1.0, 0.0)).astype(np.float32).reshape(-1, 2)
        pairs = pairs[pairs[:, 0] > eps]  # a pair whose u1 is too small is drawn again
        if len(pairs) >= half:
            break
        spare *= 2
    u1, u2 = pairs[:half, 0], pairs[:half, 1]
    angle = (np.float32(2.0 * np.pi) * u2).astype(np.float64)
    return ((-2.0 * np.log(u1.astype(np.float64))).astype(np.float32), np.cos(angle).astype(np.float32),
            np.sin(angle).astype(np.float32))


def _expand(op: Any, tir: Any) -> Any:
    h = Hlo(tir, op.location)
    result = tir.RankedTensorType(op.results[0].type)
    element = str(result.element_type)
    wide = computed_in(element)
    count = int(np.prod(list(result.shape), dtype=np.int64))
    logs, cosines, sines = box_muller_constants(count)
    half = len(logs)
    mu = h.broadcast(h.convert(op.operands[0], wide), [half], [])
    sigma = h.broadcast(h.convert(op.operands[1], wide), [half], [])
    mag = h.ew("multiply", sigma, h.ew("sqrt", h.constant(logs, wide)))
    first = h.ew("add", h.ew("multiply", mag, h.constant(cosines, wide)), mu)
    second = h.ew("add", h.ew("multiply", mag, h.constant(sines, wide)), mu)
    values = h.concatenate([first, second], 0)
    if 2 * half != count:
        values = h.slice(values, [0], [count])
    shaped = h._op("stablehlo.reshape", h.tensor(list(result.shape), wide), [values])
    return h.convert(shaped, element)
