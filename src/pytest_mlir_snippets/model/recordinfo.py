"""``ItemRecord.info``: the facts of one item beyond its outcome, as named fields.

``to_json`` writes the keys users' scripts read (``info.tolerance``, ``info.cache``,
``info.calls``, ...), each only when it was set (None: not set); ``from_json`` reads them
back from a record's JSON (``mlir-snippets report``, an earlier version's file). Keys it
does not know (a newer or older version's) travel on unchanged in ``other``.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

JsonList = list[dict[str, Any]]  # nested published data (calls, host ops, kernels), written as it came


@dataclass
class RecordInfo:
    # a snippet's compile and execute
    cache: str | None = None  # "hit": the compile came from the disk cache
    iree_route: str | None = None  # the IREE input route taken
    iree_cannot_parse: str | None = None  # the newer IREE release that wrote what the installed one cannot parse
    fed_inputs: list[str] | None = None  # the snippet's constants fed at run time, where each came from
    kept_constants: list[str] | None = None  # constants kept constant, and why
    tolerance: dict[str, Any] | None = None  # the comparison's rule: atol, rtol, ulp, source
    widened: list[str] | None = None  # arguments and results fed and read in a wide type (f8 as f32)
    compared: int | None = None  # the elements an execute's verdict compared (0: results without elements)
    checks: JsonList | None = None  # a function with checks: each check, its line and ``computed``
    # a RUN line
    command: str | None = None  # the RUN command's text
    legacy: str | None = None  # what of another LLVM version the plugin replaced or added
    # an optimization run's stages
    mma: str | None = None  # the MMA instructions in the PTX, or "none"
    digest: str | None = None  # a benchmark's code digest (model, schedule, pipeline, target)
    reference_ms: float | None = None  # the same code's last settled median on this machine (0: unknown)
    measured: str | None = None  # when a benchmark was measured
    compile_error: str | None = None  # why torch.compile failed
    host_ops: JsonList | None = None  # loops and copies left in host code
    kernels: JsonList | None = None  # the kernels launched, with grid and block
    torch_compile: str | None = None  # whether the PyTorch benchmark reused the compiled model
    compiles: int | None = None  # iterations compiled by the worker, when this one was
    earlier: str | None = None  # figures of an earlier session: when they were measured
    updated: str | None = None  # a partial run's record (baseline.py): when that run started
    # a Python test's mlir_device calls
    calls: JsonList | None = None
    other: dict[str, Any] = field(default_factory=dict)  # keys of another version, kept as read

    def to_json(self) -> dict[str, Any]:
        found = {name: value for name in _FACTS if (value := getattr(self, name)) is not None}
        return found | self.other if self.other else found

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RecordInfo:
        """A value not of its field's type (another version's, a hand-edited file) is kept
        in ``other``, as read, rather than taken for the fact."""
        fitting = {k: v for k, v in data.items() if k in _CHECKS and _CHECKS[k](v)}
        return cls(**fitting, other={k: v for k, v in data.items() if k not in fitting})

    def scalars(self) -> list[tuple[str, str | int | float]]:
        """The facts that are one string or number (junit properties)."""
        return [(k, v) for k, v in self.to_json().items() if isinstance(v, str | int | float)]


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _records(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, dict) for v in value)


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_CHECKS: dict[str, Callable[[object], bool]] = {
    **{f.name: lambda v: isinstance(v, str) for f in fields(RecordInfo)},
    **dict.fromkeys(("fed_inputs", "kept_constants", "widened"), _strings),
    **dict.fromkeys(("host_ops", "kernels", "calls", "checks"), _records),
    "tolerance": lambda v: isinstance(v, dict), "reference_ms": _number,
    **dict.fromkeys(("compiles", "compared"), lambda v: isinstance(v, int) and not isinstance(v, bool))}
del _CHECKS["other"]
_FACTS = tuple(f.name for f in fields(RecordInfo) if f.name != "other")  # in order: ``fields`` costs per call
