"""CI shards (pytest-split's ``--splits N --group i``): which shard a run was, what all
shards were to run, and what a merge of their records says of a shard that never
reported (a cancelled or crashed job).

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from typing import Any

from pytest_mlir_snippets.model.record import ItemRecord
from pytest_mlir_snippets.protocol import Outcome, Status

Plan = list[dict[str, Any]]  # the skeleton records of every item of every shard


def plan_entry(record: ItemRecord) -> dict[str, Any]:
    """A skeleton record, without its empty fields (a plan lists every item of the suite)."""
    return {k: v for k, v in record.to_json().items() if v not in ("", 0, 0.0, [], {})}


def lost_items(documents: list[dict[str, Any]], records: dict[str, ItemRecord]) -> tuple[list[ItemRecord], str]:
    """The items planned by some shard that no document has a record of, as ``not run``
    records, and the line naming the shards that did not report ("" when all did)."""
    shards = [doc["shard"] for doc in documents if isinstance(doc.get("shard"), dict)]
    if not shards:
        return [], ""
    splits = max(int(shard["splits"]) for shard in shards)
    missing = sorted(set(range(1, splits + 1)) - {int(shard["group"]) for shard in shards})
    planned: dict[str, dict[str, Any]] = {}
    for doc in documents:
        for entry in doc.get("planned") or []:
            planned.setdefault(str(entry["nodeid"]), entry)
    lost = []
    which = (f"shard {missing[0]}" if len(missing) == 1 else "shards " + ", ".join(map(str, missing))) \
        + f" of {splits}"
    for nodeid, entry in sorted(planned.items()):
        if nodeid not in records:
            record = ItemRecord.from_json(entry)
            record.kind, record.outcome = Status.NOT_RUN, Outcome.NOT_RUN
            record.message = f"not run: {which} did not report" if missing else "not run by any shard"
            lost.append(record)
    if not missing and not lost:
        return [], ""
    whose = "its" if len(missing) == 1 else "their"
    note = (f"{which} did not report: {whose} {len(lost)} item(s) are counted as not run" if missing else
            f"{len(lost)} item(s) of the plan were run by no shard: counted as not run")
    return lost, note
