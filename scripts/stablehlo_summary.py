"""Summarize a --mlir-json run over openxla's StableHLO testdata.

    python scripts/stablehlo_summary.py RESULTS.json [--top 25] [--families]

A test is one function (its compile and execute items together); it passes when
every one of its items passed. Families: the file name up to its first dtype
(``add_any_float64_2...`` -> ``add_any``), files of a subfolder (``dynamic/``,
``quantized/``) counted under the folder's name. Prints pass counts per family
and the most common failure signatures.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

DTYPE = re.compile(r"_(?:bool|u?int\d+|float\d+|bfloat16|complex\d+|q?[su]?i\d+|f\d+|c\d+|shape|dtypes|[0-9]+)(?:_|$)")


def family(file: str) -> str:
    path = Path(file)
    if path.parent.name in ("dynamic", "quantized"):
        return path.parent.name + "/"
    stem = path.stem
    m = DTYPE.search(stem)
    return stem[: m.start()] if m and m.start() else stem


def tests(items: list[dict]) -> dict[tuple[str, str], dict]:
    """Per function: passed (all items pass), its worst item's kind and signature."""
    out: dict[tuple[str, str], dict] = {}
    for item in items:
        key = (item["file"], item["function"])
        test = out.setdefault(key, {"passed": True, "kind": "pass", "signature": ""})
        if item["kind"] != "pass" and test["passed"]:
            test.update(passed=False, kind=item["kind"],
                        signature=item.get("signature") or item.get("message", "").split("\n")[0][:160])
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("results")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--families", action="store_true", help="every family, not only those with failures")
    args = parser.parse_args()
    per_test = tests(json.loads(Path(args.results).read_text())["items"])
    files: dict[str, bool] = defaultdict(lambda: True)
    for (file, _), test in per_test.items():
        files[file] &= test["passed"]
    fam: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for file, ok in files.items():
        fam[family(file)][0] += ok
        fam[family(file)][1] += 1
    passed = sum(files.values())
    print(f"files: {passed} of {len(files)} pass; functions: {sum(t['passed'] for t in per_test.values())}"
          f" of {len(per_test)}")
    kinds = Counter(t["kind"] for t in per_test.values())
    print("functions by kind: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
    print("\nper family (passed/files):")
    for name, (ok, total) in sorted(fam.items(), key=lambda kv: (-kv[1][1], kv[0])):
        if args.families or ok < total:
            print(f"  {name:40s} {ok:4d}/{total}")
    print("\ntop failure signatures (functions):")
    signatures = Counter((t["kind"], t["signature"]) for t in per_test.values() if not t["passed"])
    for (kind, signature), n in signatures.most_common(args.top):
        print(f"  {n:4d}  {kind:16s} {signature[:150]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
