"""File names made from symbol names: never outside their folder, never colliding."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

_UNSAFE = re.compile(r"[^\w.+-]+|\.{2,}")


def safe_name(name: str) -> str:
    """A file name that stays inside its folder, whatever the symbol name; a name
    that had to change gets a hash of the original, so two never collide."""
    cleaned = _UNSAFE.sub("_", name).strip(".")[:100]
    if cleaned == name:
        return name
    return f"{cleaned or '_'}-{hashlib.sha1(name.encode()).hexdigest()[:8]}"


def artifact_dir(root: Path, file: Path, uid: str, target: str) -> Path:
    """``<root>/ops_mlir_snippets/<file>/<func>/<target>/``, always inside root."""
    return root / "ops_mlir_snippets" / safe_name(file.name) / safe_name(uid) / safe_name(target)
