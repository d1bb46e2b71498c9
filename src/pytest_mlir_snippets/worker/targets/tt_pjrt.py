"""tt-mlir through tt-xla's PJRT plugin: StableHLO compiled to TTIR, TTNN MLIR and a TTNN
flatbuffer, with or without a Tenstorrent card.

The plugin library comes from Tenstorrent's ``pjrt-plugin-tt`` where a user has it installed,
else ``jax-tt-plugin``'s pinned build (its package names no author: another binary is refused),
fetched with pip into the cache on first use (``mlir-snippets fetch-tt``: ahead of time), not
installed: installed, it registers a JAX backend that aborts every JAX program without a card
("TT_FATAL: No chips detected"). One ``pypjrt`` client (PJRT in Python) per worker process.

Without a card (no ``/dev/tenstorrent``) the client runs in compile-only mode, which needs
a system descriptor: the one the user gives (``--mlir-sys-desc``, ``$SYSTEM_DESC_PATH``),
used as it is, else one libtt writes itself when started on the mock cluster descriptor
this package ships (one Blackhole P150), generated once per machine into the cache. libtt
writes about 400 MB of runtime files into its temporary folder on each start, under a lock:
the cache (``$MLIR_SNIPPETS_TT_CACHE``, else ``~/.cache/pytest-mlir-snippets/tt``).

A serialized executable is ``TTSERv00`` and six little-endian u64: (offset, size) of the
TTIR text, the TTNN text and the flatbuffer, offsets counted from the end of that header.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import importlib.util
import os
import re
import struct
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_mlir_snippets.protocol import Diagnostic, Kind
from pytest_mlir_snippets.worker.core import SnippetFailure

# the pinned build of jax-tt-plugin's libtt.so, fetched from its wheel into the cache
PLUGIN_WHEEL = "jax-tt-plugin==0.1.3"
PLUGIN_MEMBER = "jax_plugins/libtt/libtt.so"
PINNED_SHA256 = "c3a255e7217251383043bad3090d6d2c3fcce99d1c0c772f5735f3ae7cc00654"
MOCK_CLUSTER = Path(__file__).resolve().parents[2] / "data" / "tt" / "blackhole_P150.yaml"
DESCRIPTOR = "tt_pjrt_system_descriptor"  # what libtt writes into its temporary folder
_MARKER = b"TTSERv00"
_DIAGNOSTIC = re.compile(r'^loc\("-":(\d+):(\d+)\): (error|warning|note): (.*)$', re.M)
INSTALL = "pip install 'pytest-mlir-snippets[tt]' (pypjrt), then `mlir-snippets fetch-tt` (tt-xla's PJRT plugin)"


class PluginError(Exception):
    """The plugin cannot be used here: missing, a different build, or it will not start."""


def plugin_library(fetch: bool = True) -> Path:
    """The tt PJRT plugin's library: Tenstorrent's installed wheel, an installed jax-tt-plugin,
    else the pinned libtt.so in the cache, fetched there first unless ``fetch`` is false.
    PluginError when there is none, or when a jax-tt-plugin build is not the pinned one."""
    spec = importlib.util.find_spec("pjrt_plugin_tt")  # Tenstorrent's own wheel
    if spec is not None and spec.submodule_search_locations:
        found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.so"))
        if found:
            return found[0]
    try:
        spec = importlib.util.find_spec("jax_plugins.libtt")
    except ModuleNotFoundError:
        spec = None
    if spec is not None and spec.submodule_search_locations:
        return _pinned(Path(next(iter(spec.submodule_search_locations))) / "libtt.so")
    library = cache_dir() / f"libtt-{PINNED_SHA256[:16]}.so"
    if not library.is_file():
        if not fetch:
            raise PluginError(f"the tt PJRT plugin is not in the cache ({library}): {INSTALL}")
        with _locked(library.parent, ".fetch.lock"):
            if not library.is_file():
                _fetch(library)
    return _pinned(library)


def _pinned(library: Path) -> Path:
    digest = _sha256(library)
    if digest != PINNED_SHA256:
        raise PluginError(f"{library} is not the pinned jax-tt-plugin build (sha256 {digest[:16]}..., expected "
                          f"{PINNED_SHA256[:16]}...): refused; {INSTALL}")
    return library


def _fetch(library: Path) -> None:
    """``libtt.so`` out of the pinned wheel (``pip download``: the package index pip is set up
    for), written whole into ``library``."""
    with tempfile.TemporaryDirectory(dir=library.parent) as folder:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet",
                   "--disable-pip-version-check", PLUGIN_WHEEL, "-d", folder]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise PluginError(f"{PLUGIN_WHEEL} could not be fetched: {error}") from None
        wheels = sorted(Path(folder).glob("*.whl"))
        if done.returncode or not wheels:
            said = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
            raise PluginError(f"{PLUGIN_WHEEL} could not be fetched with pip: "
                              f"{said[-1] if said else f'exit code {done.returncode}'}") from None
        partial = Path(folder) / "libtt.so"
        with zipfile.ZipFile(wheels[0]) as wheel, wheel.open(PLUGIN_MEMBER) as member, partial.open("wb") as out:
            for block in iter(lambda: member.read(1 << 20), b""):
                out.write(block)
        os.replace(partial, library)  # whole or not at all, whenever this process is stopped


@functools.cache
def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def has_card() -> bool:
    """Whether this machine has a Tenstorrent card (its driver's device nodes)."""
    folder = Path("/dev/tenstorrent")
    return folder.is_dir() and any(entry.name.isdigit() for entry in folder.iterdir())


def cache_dir() -> Path:
    folder = os.environ.get("MLIR_SNIPPETS_TT_CACHE") or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pytest-mlir-snippets" / "tt")
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextlib.contextmanager
def _locked(folder: Path, name: str = ".lock") -> Iterator[None]:
    """The cache folder to this process alone (xdist's workers start together)."""
    with (folder / name).open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def generated_descriptor(library: Path) -> Path:
    """The system descriptor libtt writes for the shipped mock cluster, made once per
    machine (a client started in a child process, with libtt's files in the cache)."""
    path = (folder := cache_dir()) / f"mock-blackhole-p150-{_sha256(library)[:12]}.ttsys"
    if path.is_file():  # renamed into place whole: made, no waiting for the lock
        return path
    with _locked(folder):
        if path.is_file():
            return path
        script = ("import os, shutil, sys, pypjrt\n"
                  "client = pypjrt.Client.create(sys.argv[1])\n"
                  "shutil.copy(os.path.join(os.environ['TMPDIR'], sys.argv[2]), sys.argv[3] + '.partial')\n"
                  "os.replace(sys.argv[3] + '.partial', sys.argv[3])\n"  # whole, for the look without the lock
                  "os._exit(0)\n")
        env = dict(os.environ, TMPDIR=str(folder), TT_METAL_MOCK_CLUSTER_DESC_PATH=str(MOCK_CLUSTER))
        env.pop("TT_COMPILE_ONLY_SYSTEM_DESC", None)
        done = subprocess.run([sys.executable, "-c", script, str(library), DESCRIPTOR, str(path)], env=env,
                              capture_output=True, text=True, timeout=600)
        if done.returncode != 0 or not path.is_file():
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise PluginError(f"the system descriptor could not be generated from {MOCK_CLUSTER.name} "
                              f"(exit {done.returncode}): {last}")
    return path


@dataclass
class Artifacts:
    """What tt-mlir made of one module."""

    ttir: str
    ttnn: str
    flatbuffer: bytes

    @classmethod
    def from_serialized(cls, blob: bytes) -> Artifacts:
        if not blob.startswith(_MARKER) or len(blob) < 56:
            raise ValueError(f"not a serialized tt executable (starts {blob[:8]!r})")
        pairs = [struct.unpack_from("<QQ", blob, 8 + 16 * i) for i in range(3)]
        ttir, ttnn, flat = (blob[56 + offset: 56 + offset + size] for offset, size in pairs)
        return cls(ttir.decode(), ttnn.decode(), flat)

    def check_flatbuffer(self) -> None:
        """A size-prefixed flatbuffer with tt-mlir's file id ``TTNN``; ValueError if not."""
        if not size_prefixed(self.flatbuffer, b"TTNN"):
            raise ValueError(f"the flatbuffer ({len(self.flatbuffer)} bytes) is not a size-prefixed TTNN file")


def size_prefixed(data: bytes, file_id: bytes) -> bool:
    """Whether ``data`` is a size-prefixed flatbuffer with ``file_id`` (tt-mlir's files:
    ``TTNN`` programs, ``TTSY`` system descriptors)."""
    return len(data) >= 12 and struct.unpack_from("<I", data)[0] == len(data) - 4 and data[8:12] == file_id


class Client:
    """One PJRT client on the plugin, in compile-only mode without a card."""

    def __init__(self, sys_desc: tuple[str, str] | None) -> None:
        import pypjrt

        library = plugin_library()
        folder = cache_dir()
        self.card = has_card()
        if not self.card:
            path = Path(sys_desc[0]) if sys_desc else generated_descriptor(library)
            _check_descriptor(path, sys_desc[1] if sys_desc else "the cache")
            os.environ["TT_COMPILE_ONLY_SYSTEM_DESC"] = str(path)
            self.descriptor = str(path)
        else:
            self.descriptor = "the card's own"
        os.environ["TMPDIR"] = str(folder)  # libtt unpacks its runtime files there, once
        with _locked(folder):
            try:
                self.client = pypjrt.Client.create(str(library))
            except Exception as error:
                message = str(error).splitlines()[0] if str(error) else type(error).__name__
                if "schema mismatch" in str(error):
                    message = f"the system descriptor {self.descriptor} is not this libtt's: {message}"
                raise PluginError(f"the tt PJRT client did not start: {message}") from None

    def compile(self, module: str) -> tuple[Any, Artifacts]:
        """(the executable, its TTIR, TTNN MLIR and flatbuffer); tt-mlir's failure as a
        compile-error with its located diagnostics (what libtt printed to stderr)."""
        start = _stderr_size()
        try:
            executable = self.client.compile(module)
        except Exception as error:
            raise SnippetFailure(Kind.COMPILE_ERROR, f"tt-mlir (through tt-xla's PJRT plugin): {error}",
                                 _diagnostics_since(start)) from None
        try:
            artifacts = Artifacts.from_serialized(bytes(executable.serialize()))
            artifacts.check_flatbuffer()
        except ValueError as error:
            raise SnippetFailure(Kind.COMPILE_ERROR, f"tt-mlir's executable: {error}") from None
        return executable, artifacts


def _check_descriptor(path: Path, source: str) -> None:
    """A system descriptor is a size-prefixed flatbuffer with file id ``TTSY``; libtt
    crashes on anything else, so it is checked first."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise PluginError(f"no system descriptor at {path} (from {source}): {error.strerror}") from None
    if not size_prefixed(data, b"TTSY"):
        raise PluginError(f"{path} (from {source}) is not a tt system descriptor (a size-prefixed TTSY "
                          "flatbuffer): `mlir-snippets sysdesc` writes one")


def _stderr_size() -> int:
    try:
        return os.fstat(2).st_size
    except OSError:
        return 0


def _diagnostics_since(start: int) -> list[Diagnostic]:
    """tt-mlir's diagnostics in what this process wrote to its stderr (a file in the
    sandbox) since ``start``: ``loc("-":LINE:COL): error: ...``."""
    try:
        with open("/proc/self/fd/2", "rb") as stderr:
            stderr.seek(start)
            text = stderr.read(1 << 20).decode("utf-8", "replace")
    except OSError:
        return []
    return [Diagnostic(m.group(3), m.group(4), int(m.group(1)), int(m.group(2))) for m in _DIAGNOSTIC.finditer(text)]


def given_descriptor(option: str | None) -> tuple[str, str] | None:
    """(path, where it came from) of a descriptor the user gave (--mlir-sys-desc, else
    $SYSTEM_DESC_PATH); None: none given."""
    if option:
        return option, "--mlir-sys-desc"
    if os.environ.get("SYSTEM_DESC_PATH"):
        return os.environ["SYSTEM_DESC_PATH"], "$SYSTEM_DESC_PATH"
    return None


def environment_failure(error: PluginError) -> SnippetFailure:
    return SnippetFailure(Kind.UNSUPPORTED, str(error), environment=True)


def as_main(module: str, function: str) -> str:
    """``module`` with ``function`` named ``main`` (PJRT's entry); a ``main`` already there
    takes another name first."""
    if function == "main":
        return module
    taken = set(re.findall(r'@"?([\w$.\-]+)', module))
    other = next(f"main_{n}" for n in range(len(taken) + 1) if f"main_{n}" not in taken)
    module = _renamed(module, "main", other)
    return _renamed(module, function, "main")


def _renamed(module: str, old: str, new: str) -> str:
    return re.sub(r'@(?:"' + re.escape(old) + r'"|' + re.escape(old) + r'(?![\w$.\-]))', "@" + new, module)
