"""A response's typed facts as the JSON object records and the compile cache publish
(``info``: ``info.tolerance``, ``info.cache``, ``info.failing_pass``, ...), and back.

Each fact is written under its field's name, only when it differs from its default (an
empty list, "", None), as the keys of the free-form info of earlier releases were; a
response's groups are written in one order, so a later group's fact (a verdict's
``reference``) stands over an earlier one's (the compile's).

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import MISSING, Field, asdict, fields, is_dataclass
from typing import Any

from pytest_mlir_snippets.protocol.answers import (
    AppliedTolerance,
    CheckComputed,
    CompileFacts,
    DeviceFacts,
    DriverFacts,
    HostOp,
    IterationFacts,
    JsonValue,
    Launch,
    PytorchFacts,
    Response,
    Triage,
    Verdict,
)
from pytest_mlir_snippets.protocol.kinds import Computed, Golden

# the response's own facts (a run's values are arrays, not JSON: never written)
_TOP = ("stage", "environment", "skip", "internal", "returncode", "cache", "files", "steps", "pid")
# the groups in the order they are written and read back: a key two groups share is the later's
# when written, the first's when read (the compile cache keeps compiles: their facts first)
_GROUPS: tuple[tuple[str, type[Any]], ...] = (
    ("facts", CompileFacts), ("triage", Triage), ("verdict", Verdict), ("device", DeviceFacts),
    ("iteration", IterationFacts), ("pytorch", PytorchFacts), ("driver", DriverFacts))


def info_json(response: Response) -> dict[str, JsonValue]:
    """``response``'s facts under their published keys."""
    found: dict[str, JsonValue] = {}
    for name in _TOP:
        field_ = _FIELDS[Response][name]
        value = getattr(response, name)
        if value != _default(field_):
            found[name] = _data(value)
    for attribute, _ in _GROUPS:
        group = getattr(response, attribute)
        if group is not None:
            found.update(group_json(group))
    return found


def group_json(group: Any) -> dict[str, JsonValue]:
    """One group's facts (a ``DeviceFacts`` for the device-opened hook) under their keys."""
    always = _ALWAYS.get(type(group), ())
    return {f.name: _data(getattr(group, f.name)) for f in fields(group)
            if getattr(group, f.name) != _default(f) or f.name in always}


def apply_info(response: Response, info: dict[str, JsonValue]) -> bool:
    """``info`` (what ``info_json`` wrote) read back into ``response``'s fields; False when a
    key is unknown or a value is not of its field's type (then ``response`` is incomplete)."""
    groups: dict[str, dict[str, object]] = {}
    for key, value in info.items():
        if key in _TOP:
            parsed = _parse(_FIELDS[Response][key], value)
            if parsed is _BAD:
                return False
            setattr(response, key, parsed)
            continue
        owner = _OWNER.get(key)
        if owner is None:
            return False
        attribute, kind = owner
        parsed = _parse(_FIELDS[kind][key], value)
        if parsed is _BAD:
            return False
        groups.setdefault(attribute, {})[key] = parsed
    for attribute, kind in _GROUPS:
        if attribute in groups:
            try:
                setattr(response, attribute, kind(**groups[attribute]))
            except TypeError:  # a required field missing (a driver's golden)
                return False
    return True


_BAD = object()
_ALWAYS: dict[type[Any], tuple[str, ...]] = {DeviceFacts: ("device", "id")}  # the hook's info always has them
_KINDS: tuple[type[Any], ...] = (Response, *(t for _, t in _GROUPS))
_FIELDS: dict[type[Any], dict[str, Field[Any]]] = {kind: {f.name: f for f in fields(kind)} for kind in _KINDS}


def _owners() -> dict[str, tuple[str, type[Any]]]:
    """Each group fact's key -> its group (attribute, type): the first of _GROUPS that has it."""
    owners: dict[str, tuple[str, type[Any]]] = {}
    for attribute, kind in _GROUPS:
        for name in _FIELDS[kind]:
            owners.setdefault(name, (attribute, kind))
    return owners


_OWNER = _owners()  # looked up once per key: a warm rerun reads a cache entry's info per item


def _default(field_: Field[Any]) -> Any:
    if field_.default is not MISSING:
        return field_.default
    if field_.default_factory is not MISSING:
        return field_.default_factory()
    return MISSING


def _data(value: Any) -> JsonValue:
    if isinstance(value, enum.Enum):
        return value.value  # type: ignore[no-any-return]
    if is_dataclass(value) and not isinstance(value, type):
        return _data(asdict(value))
    if isinstance(value, list | tuple):
        return [_data(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _data(v) for k, v in value.items()}
    return value  # type: ignore[no-any-return]


def _strings(value: object) -> bool:
    return type(value) is list and all(type(v) is str for v in value)


def _optional_int(value: object) -> bool:
    return value is None or type(value) is int


def _pairs(value: object) -> Any:
    if type(value) is not list or not all(type(p) is list and len(p) == 2 and _strings(p) for p in value):
        return _BAD
    return [(str(a), str(b)) for a, b in value]


def _record(kind: type[Any], value: object, check: Callable[[dict[str, object]], bool]) -> Any:
    if type(value) is not dict or {f.name for f in fields(kind)} != value.keys() or not check(value):
        return _BAD
    return kind(**value)


def _records(kind: type[Any], value: object, check: Callable[[dict[str, object]], bool]) -> Any:
    if type(value) is not list:
        return _BAD
    parsed = [_record(kind, v, check) for v in value]
    return _BAD if _BAD in parsed else parsed


def _checks(parsed: Any) -> Any:
    """Each check's ``computed`` read back as the enum it was written from."""
    if parsed is _BAD:
        return _BAD
    for check in parsed:
        if check.computed is not None:
            check.computed = _enum(Computed, check.computed)
    return _BAD if any(c.computed is _BAD for c in parsed) else parsed


def _enum(kind: type[enum.Enum], value: object) -> Any:
    try:
        return kind(value)
    except ValueError:
        return _BAD


def _number(value: object) -> bool:
    return type(value) is int or type(value) is float


# the fields whose values are not plain str, bool, int or lists of str
_SPECIAL: dict[str, Callable[[object], Any]] = {
    "golden": lambda v: _enum(Golden, v),
    "computed": lambda v: _enum(Computed, v),
    "tolerance": lambda v: _record(AppliedTolerance, v, lambda d: _number(d["atol"]) and _number(d["rtol"])
                                   and type(d["ulp"]) is int and type(d["source"]) is str),
    "input_specs": _pairs,
    "failing_args": lambda v: v if v is None or _strings(v) else _BAD,
    "golden_report": lambda v: v,
    "host_ops": lambda v: _records(HostOp, v, lambda d: type(d["op"]) is str and _optional_int(d["line"])
                                   and _optional_int(d["column"])),
    "kernels": lambda v: _records(Launch, v, lambda d: type(d["kernel"]) is str),
    "reference_ms": lambda v: v if v is None or _number(v) else _BAD,
    "returncode": lambda v: v if _optional_int(v) else _BAD,
    "compared": lambda v: v if _optional_int(v) else _BAD,
    "checks": lambda v: _checks(_records(CheckComputed, v, lambda d: type(d["check"]) is str
                                         and _optional_int(d["line"]))),
    "id": lambda v: v if _optional_int(v) else _BAD,
    "files": lambda v: v if type(v) is dict and all(type(x) is str for x in v.values()) else _BAD,
    "commands": lambda v: v if type(v) is list and all(_strings(c) for c in v) else _BAD,
}


def _parse(field_: Field[Any], value: object) -> Any:
    special = _SPECIAL.get(field_.name)
    if special is not None:
        return special(value)
    default = _default(field_)
    if type(default) is list:
        return value if _strings(value) else _BAD
    if isinstance(default, bool) or isinstance(default, int | str):
        return value if type(value) is type(default) else _BAD
    return _BAD
