"""Fetch the corpus the project's tests and ``scripts/conformance.py`` run on: real MLIR
from public repositories at pinned commits, in the layout ``../shared/corpus`` has.

    python scripts/get_corpus.py [DEST] [--only NAME ...] [--source NAME=URL@REF ...] [--force]

DEST defaults to ``../shared/corpus`` beside this checkout (where the tests look; or set
``MLIR_SNIPPETS_CORPUS`` to DEST). Each part is fetched with git alone (a shallow,
sparse fetch of the pinned commit: only the folders used), copied into a temporary
folder and moved into place when complete, so that an interrupted fetch leaves no half
a corpus behind. An existing part is kept unless ``--force``. ``--source`` points a part
at another repository or ref (a mirror, a local clone). Needs ``git`` on the PATH and
network access to the repositories.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Part:
    """A folder of the corpus: ``paths`` of ``url`` at ``ref``, each copied to its place."""

    url: str
    ref: str
    paths: tuple[tuple[str, str], ...]  # (path in the repository, path in the part's folder; "" its root)


STABLEHLO = ("https://github.com/openxla/stablehlo", "3c9301c116f97fbaf696959a0ede32712aec587b")
LLVM = ("https://github.com/llvm/llvm-project", "llvmorg-22.1.8")  # the release of the xtc-mlir-* wheels
IREE_E2E = ("stablehlo_ops", "tosa_ops", "linalg", "tensor_ops", "linalg_ext_ops")
INTEGRATION = "mlir/test/Integration"
PARTS: dict[str, Part] = {
    "tt-mlir-snippets": Part("https://github.com/tenstorrent/tt-mlir", "19c86fca45ae7c3d8f886c0401d8b40a40d2f294",
                             (("test/python/golden/mlir_snippets", ""),)),
    "iree-onnx-ops": Part("https://github.com/iree-org/iree-test-suites", "612f93663b32ea86ea442e87be549f1056a5de1c",
                          (("onnx_ops/onnx/node/generated", ""),)),
    "stablehlo-testdata": Part(*STABLEHLO, (("stablehlo/testdata", ""),)),
    "stablehlo-interpret": Part(*STABLEHLO, (("stablehlo/tests/interpret", ""),)),
    "iree-e2e": Part("https://github.com/iree-org/iree", "b48a5955575cf8924ffc191f3b0804976e5738b9",
                     tuple((f"tests/e2e/{folder}", folder) for folder in IREE_E2E)),
    "mlir-integration": Part(*LLVM, ((f"{INTEGRATION}/Dialect", "Dialect"),)),
    "lit-configs": Part(*LLVM, tuple((f"{INTEGRATION}/{cfg}", f"Integration/{cfg}") for cfg in (
        "lit.local.cfg", "Dialect/LLVMIR/CPU/lit.local.cfg", "Dialect/SparseTensor/CPU/lit.local.cfg"))),
}


class FetchError(RuntimeError):
    """A part that could not be fetched, in one line."""


def _git(*args: str, cwd: Path) -> None:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise FetchError(f"git {args[0]} failed: {last}")


def fetch_part(name: str, part: Part, dest: Path) -> Path:
    """``part`` fetched into ``dest / name`` (replacing it); the folder written."""
    with tempfile.TemporaryDirectory(dir=dest) as tmp:
        clone = Path(tmp) / "clone"
        clone.mkdir()
        _git("init", "-q", cwd=clone)
        _git("remote", "add", "origin", part.url, cwd=clone)
        _git("sparse-checkout", "set", "--no-cone", *(f"/{source}" for source, _ in part.paths), cwd=clone)
        _git("fetch", "-q", "--depth", "1", "--filter=blob:none", "origin", part.ref, cwd=clone)
        _git("checkout", "-q", "FETCH_HEAD", cwd=clone)
        built = Path(tmp) / name
        for source, target in part.paths:
            found = clone / source
            if not found.exists():
                raise FetchError(f"{name}: {source} is not in {part.url} at {part.ref}")
            place = built / target
            place.parent.mkdir(parents=True, exist_ok=True)
            (shutil.copytree if found.is_dir() else shutil.copy)(found, place)
        final = dest / name
        if final.exists():
            shutil.rmtree(final)
        built.rename(final)  # one step: a part is there whole, or not at all
    return final


def parse_source(text: str) -> tuple[str, str, str]:
    """``NAME=URL@REF`` as (name, url, ref); ValueError naming what is wrong."""
    name, sep, rest = text.partition("=")
    url, at, ref = rest.rpartition("@")
    if not sep or not at or not url or not ref:
        raise ValueError(f"--source {text!r}: expected NAME=URL@REF")
    if name not in PARTS:
        raise ValueError(f"--source {text!r}: no part named {name!r} (parts: {', '.join(PARTS)})")
    return name, url, ref


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", nargs="?", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--only", action="append", choices=sorted(PARTS), help="fetch only this part (repeatable)")
    parser.add_argument("--source", action="append", default=[], help="NAME=URL@REF: fetch a part from elsewhere")
    parser.add_argument("--force", action="store_true", help="fetch parts that are there already")
    args = parser.parse_args(argv)
    parts = dict(PARTS)
    try:
        for text in args.source:
            name, url, ref = parse_source(text)
            parts[name] = replace(parts[name], url=url, ref=ref)
    except ValueError as error:
        parser.error(str(error))
    args.dest.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name in args.only or list(parts):
        if (args.dest / name).exists() and not args.force:
            print(f"{name}: there already ({args.dest / name}); --force fetches it again")
            continue
        try:
            print(f"{name}: {fetch_part(name, parts[name], args.dest)}")
        except FetchError as error:
            print(f"{name}: {error}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
