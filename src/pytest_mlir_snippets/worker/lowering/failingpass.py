"""Which pass of a pipeline failed, and the IR it was given.

A pipeline that fails is run again, one pass at a time (each nested in its anchors as
written: ``builtin.module(func.func(convert-linalg-to-loops))``), on a copy of the module
taken before the first run, up to the pass that fails; that pass, as written in the
pipeline (``one-shot-bufferize{bufferize-function-boundaries}``), is ``failing_pass``,
and the module as it was before it is the IR that pass received.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_OPEN, _CLOSE = "({[<", ")}]>"


def _split(text: str) -> list[str]:
    """``text`` split at its top-level commas (brackets and quoted strings respected)."""
    parts, depth, start, quoted = [], 0, 0, False
    for i, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def steps(pipeline: str) -> list[tuple[str, str]]:
    """(the pass as written, a pipeline that runs it alone at its place) for every pass of
    ``pipeline``, in order: ``anchor(a, b{x=1}, func.func(c))`` gives ``a``, ``b{x=1}``, ``c``."""
    found: list[tuple[str, str]] = []

    def walk(element: str, anchors: list[str]) -> None:
        name_end = next((i for i, ch in enumerate(element) if ch in "({"), len(element))
        if element.endswith(")") and element[name_end:name_end + 1] == "(":  # an anchor and its passes
            for inner in _split(element[name_end + 1:-1]):
                walk(inner, [*anchors, element[:name_end].strip()])
            return
        nested = element
        for anchor in reversed(anchors):
            nested = f"{anchor}({nested})"
        found.append((element, nested))

    walk(pipeline.strip(), [])
    return found


def locate(snapshot: Any, pipeline: str, pass_manager: Callable[[str], Any]) -> dict[str, str] | None:
    """The failing pass (``failing_pass``), the IR it received (``before_pass_ir``) and the
    pipeline that runs it alone (``failing_pipeline``), found by running ``pipeline``'s
    passes one at a time on ``snapshot`` (a copy of the module before the pipeline); with
    the command-line tool whose passes these are (``failing_tool``: ``torch-mlir-opt`` for
    torch-mlir's bindings, else ``mlir-opt``). None when each runs."""
    tool = "torch-mlir-opt" if getattr(pass_manager, "__module__", "").startswith("torch_mlir") else "mlir-opt"
    for written, alone in steps(pipeline):
        before = snapshot.get_asm(enable_debug_info=True)  # with the snippet's locations
        try:
            pass_manager(alone).run(snapshot)
        except Exception:
            return {"failing_pass": written, "before_pass_ir": before, "failing_pipeline": alone,
                    "failing_tool": tool}
    return None
