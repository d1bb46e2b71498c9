"""Files on disk: names made from symbol names (never outside their folder, never
colliding), and files written whole or not at all.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import secrets
from pathlib import Path

_UNSAFE = re.compile(r"[^\w.+-]+|\.{2,}")

# IREE's test layout: recorded inputs and outputs of the ``model.mlir`` beside it
IREE_FLAGS = "run_module_io_flags.txt"


def safe_name(name: str) -> str:
    """A file name that stays inside its folder, whatever the symbol name; a name
    that had to change gets a hash of the original, so two never collide."""
    cleaned = _UNSAFE.sub("_", name).strip(".")[:100]
    if cleaned == name:
        return name
    return f"{cleaned or '_'}-{hashlib.sha1(name.encode()).hexdigest()[:8]}"


def sidecar_name(path: Path, function: str) -> str:
    """The name of ``function``'s recorded-data sidecar (``<stem>.<function>.npz``) beside ``path``."""
    return f"{path.stem}.{safe_name(function)}.npz"


ARTIFACTS = "ops_mlir_snippets"  # the folder of items' artifacts under the output root: never collected


def artifact_dir(root: Path, file: Path, uid: str, target: str, rootdir: Path) -> Path:
    """``<root>/ops_mlir_snippets/<file>/<func>/<target>/``, always inside root.

    ``<file>`` is the snippet file's path relative to pytest's rootdir, one folder per
    component, so ``a/model.mlir`` and ``b/model.mlir`` (every IREE test folder has a
    ``model.mlir``) keep their artifacts apart. Each component goes through
    ``safe_name``: the ``..`` of a file outside the rootdir becomes a hashed name."""
    return file_artifacts(root, file, rootdir).joinpath(safe_name(uid), safe_name(target))


@functools.lru_cache(maxsize=256)
def file_artifacts(root: Path, file: Path, rootdir: Path) -> Path:
    """``<root>/ops_mlir_snippets/<file>/``: the folder of one input file's artifacts, made
    once per file (a passing compile item asks for its folder, to remove an earlier run's
    reproducer: per item, the relative path and its safe names were ~25 µs of CPU)."""
    relative = Path(os.path.relpath(file, rootdir)).parts
    return root.joinpath(ARTIFACTS, *map(safe_name, relative))


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder and a rename. The temporary file
    is created with mode 0666 for the kernel to apply the umask (and the folder's
    default ACL), as for any file written in place: ``mkstemp``'s 0600 would stay on
    the report, unreadable to the group that reads CI artifacts."""
    for _ in range(100):
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"no free temporary name beside {path}")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_files(folder: Path, files: dict[str, str], snippet: str) -> None:
    """Files a backend made for the artifact folder (an IREE ``model.vmfb``, the inputs as
    ``.npy``, the commands that reproduce the item), base64 in the response: their
    names are the backend's, kept inside the folder; shell scripts made executable."""
    import base64

    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "snippet.mlir").exists():
        (folder / "snippet.mlir").write_text(snippet)
    for name, data in files.items():
        path = folder / safe_name(name)
        path.write_bytes(base64.b64decode(data))
        if path.suffix == ".sh":
            path.chmod(0o755)
