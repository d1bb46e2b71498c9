"""IREE's ``check`` module for the pip runtime, in Python.

A module compiled from IREE's ``check`` ops imports ``check.expect_*`` as optional:
the pip runtime has no such module, and without one the calls are skipped silently
(a wrong expected value passes). This module is registered beside the HAL module in
every context (``PyModuleInterface``), receives each call with its values (and
``expect_almost_eq``'s atol and rtol, as IREE's compiler sets them), and records it;
after the run each call is judged as IREE's check module judges it
(``golden.checks``), a failure at the line of its check op when the calls match
the snippet's checks one to one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pytest_mlir_snippets.golden.checks import Check
from pytest_mlir_snippets.mlirtext.ireeops import CheckSite

# export name -> (calling convention, rule): 0 = no results; i = i32, r = a ref, f = f32
EXPORTS = {
    "expect_true": ("0i_v", "nonzero"),
    "expect_false": ("0i_v", "zero"),
    "expect_all_true": ("0rr_v", "nonzero"),
    "expect_eq": ("0rrr_v", "bits"),  # IREE's check module compares the bytes
    "expect_almost_eq": ("0rrrff_v", "almost_eq"),
}


@dataclass
class Call:
    """One call the compiled module made: which check, its values, its tolerance."""

    name: str
    actual: np.ndarray
    expected: np.ndarray
    atol: float = 0.0
    rtol: float = 0.0


class CheckModule:
    """The ``check`` module of one VM instance; ``calls`` holds what the last run called."""

    def __init__(self, rt: Any, instance: Any) -> None:
        self.rt = rt
        self.device: Any = None  # the device buffers are read from (set by the runtime)
        self.calls: list[Call] = []
        module = self

        class State:  # the module's per-context state: the calls go to ``module``
            def __init__(self, iface: Any) -> None:
                self.iface = iface

            def expect_true(self, value: int) -> None:
                module.record("expect_true", np.array(value, dtype=np.int32))

            def expect_false(self, value: int) -> None:
                module.record("expect_false", np.array(value, dtype=np.int32))

            def expect_all_true(self, device: Any, view: Any) -> None:
                module.record("expect_all_true", module.host(view))

            def expect_eq(self, device: Any, lhs: Any, rhs: Any) -> None:
                module.record("expect_eq", module.host(lhs), module.host(rhs))

            def expect_almost_eq(self, device: Any, lhs: Any, rhs: Any, atol: float, rtol: float) -> None:
                module.record("expect_almost_eq", module.host(lhs), module.host(rhs), atol, rtol)

        iface = rt.PyModuleInterface("check", State)
        for name, (cconv, _) in EXPORTS.items():
            iface.export(name, cconv, getattr(State, name))
        self._iface = iface  # kept: the module refers to it
        self.module = iface.create()

    def host(self, ref: Any) -> np.ndarray:
        view = ref.deref(self.rt.HalBufferView)
        return np.array(self.rt.DeviceArray(self.device, view).to_host(), copy=True)

    def record(self, name: str, actual: np.ndarray, expected: np.ndarray | None = None, atol: float = 0.0,
               rtol: float = 0.0) -> None:
        self.calls.append(Call(name, actual, actual if expected is None else expected, float(atol), float(rtol)))


def as_checks(calls: list[Call], sites: list[CheckSite], vacuous: list[bool] | None = None) -> tuple[
        list[Check], list[np.ndarray]]:
    """The calls as checks on a list of results (actual, expected per check), each at
    its check op's line (and ``vacuous``: whether its values reach it as given, per site)
    when the calls are the snippet's checks in order."""
    def base(name: str) -> str:
        return name.removeprefix("check.").removesuffix("_const")

    matched = len(calls) == len(sites) and all(base(s.name) == c.name for s, c in zip(sites, calls))
    checks: list[Check] = []
    results: list[np.ndarray] = []
    for i, call in enumerate(calls):
        site = sites[i] if matched else None
        rule = EXPORTS[call.name][1]
        element = str(call.actual.dtype)
        checks.append(Check(i, site.name if site else f"check.{call.name}", rule, element,
                            site.line if site else None, site.column if site else None,
                            call.atol, first=len(results), rtol=call.rtol,
                            vacuous=bool(site and vacuous and len(vacuous) == len(sites) and vacuous[i])))
        results += [call.actual, call.expected]
    return checks, results
