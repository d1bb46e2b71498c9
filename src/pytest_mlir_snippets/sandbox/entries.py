"""A compile cache entry: a verdict as data, never code.

An entry is a JSON document with a format version, its own key and what a verdict
needs (kind, message, diagnostics, metrics, the JSON values of info, IR, stderr).
Whoever can write the cache folder (a CI cache restored from another branch, a shared
disk) must not be able to run code in pytest, so nothing here unpickles: an entry that
does not parse, has another version or key, or holds anything but the expected fields
is not taken (the cache then compiles again and writes over it).

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import json
import math
from typing import Any

from pytest_mlir_snippets.protocol import Diagnostic, Kind, Response, apply_info, info_json

KEPT = (Kind.PASS, Kind.COMPILE_ERROR, Kind.UNSUPPORTED)
FORMAT = 1  # of an entry; another value is a miss

_ENTRY_FIELDS = frozenset(("format", "key", "kind", "message", "diagnostics", "metrics", "info", "ir", "stderr",
                           "seconds"))
_DIAGNOSTIC_FIELDS = frozenset(("severity", "message", "line", "column", "notes", "file"))
_KEPT_KINDS = {kind.value: kind for kind in KEPT}
_DEPTH = 32  # of nested lists and dicts in info, and of notes: deeper is not data this module wrote


def encode(response: Response, key: str) -> str:
    """``response`` as an entry, compact JSON text: the format version and ``key``, then
    the verdict. Of metrics, the finite numbers; of info, the values that come back from
    JSON as they are (no numpy array, tuple or other object; not the "cache" mark of a
    hit). Raises ValueError or TypeError for what JSON does not take."""
    entry = {"format": FORMAT, "key": key, "kind": response.kind.value, "message": response.message,
             "diagnostics": [_diagnostic_data(d) for d in response.diagnostics],
             "metrics": {k: v for k, v in response.metrics.items() if _is_number(v)},
             "info": {k: v for k, v in info_json(response).items() if k != "cache" and _is_data(v)},
             "ir": response.ir, "stderr": response.stderr, "seconds": response.seconds}
    return json.dumps(entry, separators=(",", ":"), allow_nan=False)


def decode(data: bytes | str, key: str) -> Response | None:
    """The verdict an entry's JSON text holds (``_verdict``), or None."""
    try:
        parsed = json.loads(data)
    except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return None
    return _verdict(parsed, key)


def _verdict(entry: object, key: str) -> Response | None:
    """The verdict ``entry`` (parsed JSON) holds, or None unless it is an entry of this
    format for ``key`` that ``encode`` could have written: another version or key, a
    field missing, extra or of another type, a kind never kept, a verdict about the machine."""
    if type(entry) is not dict or entry.keys() != _ENTRY_FIELDS or type(entry["format"]) is not int \
            or entry["format"] != FORMAT or entry["key"] != key:
        return None
    kind, message, diagnostics, metrics = entry["kind"], entry["message"], entry["diagnostics"], entry["metrics"]
    info, ir, stderr, seconds = entry["info"], entry["ir"], entry["stderr"], entry["seconds"]
    if not (type(kind) is str and kind in _KEPT_KINDS and type(message) is str and type(diagnostics) is list
            and type(metrics) is dict and (not metrics or all(_is_number(v) for v in metrics.values()))
            and type(info) is dict
            and (ir is None or type(ir) is str) and type(stderr) is str and _is_number(seconds)):
        return None
    parsed = [_diagnostic(d, 0) for d in diagnostics] if diagnostics else []
    if None in parsed:
        return None
    # its own fields: a hit marks its response, and a pack keeps the entry for the next run
    response = Response(_KEPT_KINDS[kind], message, parsed, dict(metrics), ir, stderr, seconds)  # type: ignore[arg-type]
    if not apply_info(response, info) or response.environment or response.cache:
        return None
    return response


def _diagnostic_data(diagnostic: Diagnostic) -> dict[str, Any]:
    return {"severity": diagnostic.severity, "message": diagnostic.message, "line": diagnostic.line,
            "column": diagnostic.column, "notes": [_diagnostic_data(n) for n in diagnostic.notes],
            "file": diagnostic.file}


def _diagnostic(data: object, depth: int) -> Diagnostic | None:
    if type(data) is not dict or data.keys() != _DIAGNOSTIC_FIELDS or depth > _DEPTH:
        return None
    severity, message, line, column, notes, file = (data["severity"], data["message"], data["line"],
                                                    data["column"], data["notes"], data["file"])
    if not (type(severity) is str and type(message) is str and _is_position(line) and _is_position(column)
            and type(notes) is list and type(file) is str):
        return None
    parsed = [_diagnostic(n, depth + 1) for n in notes] if notes else []
    if None in parsed:
        return None
    return Diagnostic(severity, message, line, column, parsed, file)  # type: ignore[arg-type]


def _is_position(value: object) -> bool:
    return value is None or type(value) is int


def _is_number(value: object) -> bool:
    return (type(value) is int or type(value) is float) and math.isfinite(value)


def _is_data(value: object, depth: int = 0) -> bool:
    """Whether ``value`` comes back from JSON as it is: str, bool, None, finite int and
    float, lists and str-keyed dicts of those."""
    if value is None or type(value) is str or type(value) is bool:
        return True
    if type(value) is int or type(value) is float:
        return _is_number(value)
    if depth < _DEPTH and type(value) is list:
        return all(_is_data(v, depth + 1) for v in value)
    if depth < _DEPTH and type(value) is dict:
        return all(type(k) is str and _is_data(v, depth + 1) for k, v in value.items())
    return False
