"""Files the plugin writes for people to read: whole or not at all.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import os
import secrets
from pathlib import Path


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
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
