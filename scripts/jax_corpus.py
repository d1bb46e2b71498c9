"""Write the JAX corpus: real JAX functions as StableHLO snippets with JAX's own goldens.

    python scripts/jax_corpus.py [--out tests/data/jax] [--only NAME ...]

Each function becomes ``<name>.mlir`` (``jax.jit(fn).lower(*args).as_text()``, or
``jax.export`` for the ``export_``/``poly_`` ones, symbolic shapes included) and
``<name>.main.npz`` (its inputs and JAX's CPU outputs), written by
``pytest_mlir_snippets.jaxsnippet.write_jax_snippet``; ``corpus.json`` maps each name to
its category. Inputs are seeded per function (the name's CRC), so a rerun writes the
same data. The cases themselves are in ``jax_cases.py`` beside this script.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import zlib
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from jax_cases import CASES  # noqa: E402

from pytest_mlir_snippets.jaxsnippet import write_jax_snippet  # noqa: E402

# JAX's locations name the file that called it: made relative so the corpus does not
# depend on where it was written
_LOCATION = re.compile(r'loc\("[^"]*?/([^/"]+\.py)"')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "jax")
    parser.add_argument("--only", action="append", default=[], help="write only this case (repeatable)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    categories: dict[str, str] = {}
    for case in CASES:
        if args.only and case.name not in args.only:
            continue
        inputs = case.make(zlib.crc32(case.name.encode()))
        path, _ = write_jax_snippet(case.fn, *inputs, path=args.out / f"{case.name}.mlir", export=case.export,
                                    symbolic=case.symbolic)
        path.write_text(_LOCATION.sub(r'loc("\1"', path.read_text()))
        categories[case.name] = case.category
    if not args.only:
        (args.out / "corpus.json").write_text(json.dumps(categories, indent=1, sort_keys=True) + "\n")
    print(f"{len(categories)} function(s) in {args.out}")


if __name__ == "__main__":
    main()
