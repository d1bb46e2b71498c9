"""Ops that need more than one process, or StableHLO's interpreter itself: refused by
name before parsing, as ``unsupported`` saying what is missing.

The StableHLO specification's interpreter tests run programs on a grid of replicas and
partitions (``interpreter.run_parallel``) that talk through collectives and channels, and
print or probe values for the RUN line's FileCheck. The upstream lowering runs one
process: none of that has a meaning there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pytest_mlir_snippets.protocol import Kind
from pytest_mlir_snippets.registry import TARGETS
from pytest_mlir_snippets.worker.core import SnippetFailure

_WHAT = {
    "interpreter.run_parallel": "runs programs on a grid of replicas and partitions",
    "interpreter.print": "prints a value for the RUN line's FileCheck",
    "interpreter.probe": "writes a value to disk for check.expect_serialized_eq",
    "stablehlo.replica_id": "reads the replica the process is",
    "stablehlo.partition_id": "reads the partition the process is",
    "stablehlo.send": "sends to another process through a channel",
    "stablehlo.recv": "receives from another process through a channel",
    "stablehlo.infeed": "reads the host's infeed",
    "stablehlo.outfeed": "writes the host's outfeed",
}
_COLLECTIVES = ("all_gather", "all_reduce", "all_to_all", "collective_permute", "collective_broadcast",
                "reduce_scatter")
# what a run_parallel's programs may use: the worker schedules them (lowering/parallel.py)
_SCHEDULED = frozenset({"interpreter.run_parallel", "stablehlo.replica_id", "stablehlo.partition_id",
                        *(f"stablehlo.{c}" for c in _COLLECTIVES if c != "collective_broadcast")})
_COMMENT = re.compile(r"//[^\n]*")
_OP = re.compile(r'(?<![\w.$"])"?((?:interpreter\.\w+)|stablehlo\.(?:' + "|".join(
    [*_COLLECTIVES, "replica_id", "partition_id", "send", "recv", "infeed", "outfeed"]) + r'))\b"?(?!\s*=)')


def refuse(module: str, target: str) -> None:
    """Raise ``unsupported`` for the first op of ``module`` that needs several processes
    or the reference interpreter; nothing when there is none."""
    if "interpreter." not in module and "stablehlo." not in module:
        return
    text = _COMMENT.sub("", module)
    scheduled = "interpreter.run_parallel" in text  # its programs run as calls (lowering/parallel.py)
    found = next((m for m in _OP.finditer(text) if not (scheduled and m.group(1) in _SCHEDULED)), None)
    if found is None:
        return
    name = found.group(1)
    what = _WHAT.get(name, "is a collective: it exchanges values between replicas and partitions")
    why = ("only StableHLO's interpreter has it" if name.startswith("interpreter.")
           else f"that needs several processes, and the {target} target runs one" + (
               " outside an interpreter.run_parallel (whose programs it runs as calls, one per replica and "
               "partition)" if name in _SCHEDULED else ""))
    raise SnippetFailure(Kind.UNSUPPORTED, f"{name} {what}: {why}")


def refuse_callbacks(target: str, checks: Sequence[Any], parallel: Sequence[Any]) -> None:
    """Raise ``unsupported`` where the module needs the worker to call back into itself
    while it runs (checks in a region or a callee, run_parallel's programs), unless the
    target declares that it does (``calls_back``: the cpu target's ExecutionEngine resolves
    those calls to the worker's Python)."""
    if TARGETS[target].calls_back:
        return
    nested = next((check for check in checks if check.callee), None)
    if nested is not None:
        raise SnippetFailure(Kind.UNSUPPORTED, f"{nested.name} inside a region or a callee: the "
                             f"{target} target compares checks at the function's end only (cpu records them as "
                             "they run)")
    if parallel:
        raise SnippetFailure(Kind.UNSUPPORTED, f"interpreter.run_parallel: the {target} target does not schedule "
                             "its programs (cpu runs them as calls, one per replica and partition)")
