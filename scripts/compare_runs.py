"""Compare two runs of ``scripts/conformance.py --keep DIR``: per suite, how the tests
ended before and after, what the execute verdicts compared and whether their results were
computed at run time, and every test that passed before and does not now.

    python scripts/compare_runs.py BEFORE_DIR AFTER_DIR
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from conformance import per_test


def _executes(items: list[dict]) -> list[dict]:
    return [i for i in items if i["stage"] == "execute"]


def summary(items: list[dict]) -> dict[str, object]:
    tests = per_test(items)
    executes = _executes(items)
    verdicts = [i for i in executes if i.get("golden") not in (None, "none")]
    runtime = sum(i.get("computed") == "runtime" for i in verdicts)
    return {
        "tests": len(tests),
        "pass": sum(t["kind"] == "pass" for t in tests.values()),
        "by golden": dict(Counter(f"{i['golden']}:{i['kind']}" for i in verdicts)),
        "computed": dict(Counter(str(i.get("computed")) for i in verdicts)),
        "runtime share": f"{runtime} of {len(verdicts)}" + (f" ({100 * runtime / len(verdicts):.1f}%)"
                                                            if verdicts else ""),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args()
    for path in sorted(args.after.glob("*.json")):
        old_path = args.before / path.name
        after = json.loads(path.read_text())["items"]
        before = json.loads(old_path.read_text())["items"] if old_path.exists() else []
        print(f"## {path.stem}")
        for label, items in (("before", before), ("after", after)):
            print(f"- {label}: " + json.dumps(summary(items)))
        old, new = per_test(before), per_test(after)
        red = sorted(k for k, t in new.items() if k in old and old[k]["kind"] == "pass" and t["kind"] != "pass")
        green = sorted(k for k, t in new.items() if k in old and old[k]["kind"] != "pass" and t["kind"] == "pass")
        print(f"- passed before, not now: {len(red)}; passing now, not before: {len(green)}")
        for key in red:
            t = new[key]
            print(f"  - `{key}` {t['stage']} {t['kind']}: {(t.get('message') or '').splitlines()[0][:200]}"
                  if t.get("message") else f"  - `{key}` {t['stage']} {t['kind']}")
        for key in green:
            print(f"  - now passing: `{key}`")


if __name__ == "__main__":
    main()
