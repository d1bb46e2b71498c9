"""Which pass of a pipeline failed, and the IR it was given.

A pipeline that fails is run again, one pass at a time (each nested in its anchors as
written: ``builtin.module(func.func(convert-linalg-to-loops))``), on a copy of the module
taken before the first run, up to the pass that fails; that pass, as written in the
pipeline (``one-shot-bufferize{bufferize-function-boundaries}``), is ``failing_pass``,
and the module as it was before it is the IR that pass received.

A pass that crashes the worker (an LLVM assertion, a signal in native code) leaves no answer:
the client runs the compile again with ``protocol.PROGRESS_ENV`` naming a file, and every
pipeline then runs one pass at a time, the file rewritten before each pass and each of the
plugin's own steps (``plugin_step``), and removed after it: what the file holds after the
crash names the step that crashed and the IR it received.

Those copies are paid for by failures alone: the worker's compiles run once without them
(``on_failure_located``), and a compile whose pass or plugin step failed then is run again
from its text with them, to name that step.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from pytest_mlir_snippets.protocol import PROGRESS_ENV, Kind, Triage, group_json
from pytest_mlir_snippets.worker.core import SnippetFailure

T = TypeVar("T")
_LAST_STEP: list[str] = []  # the plugin's step that ran last in this compile (``begin`` forgets it)
_COPYING = [True]  # steps copy what they receive, to name a failing one (off: ``on_failure_located``'s first run)
_MISSED = [False]  # a step failed while steps did not copy: the compile is run again with copies


def begin() -> None:
    """A compile starts: no step of the plugin's has run yet."""
    _LAST_STEP.clear()

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


def tool_of(pass_manager: Any) -> str:
    """The command-line tool whose passes ``pass_manager``'s are: ``torch-mlir-opt`` for
    torch-mlir's bindings, else ``mlir-opt``."""
    return "torch-mlir-opt" if getattr(pass_manager, "__module__", "").startswith("torch_mlir") else "mlir-opt"


def progress_file() -> str | None:
    """The file to mark each step in, in a compile run again after a crash (else None)."""
    return os.environ.get(PROGRESS_ENV) or None


def copying() -> bool:
    """Whether a step copies the module it receives (to name it, with that IR, if it
    fails); when not, a step that fails calls ``missed`` instead."""
    return _COPYING[0] or progress_file() is not None


def missed() -> None:
    """A step failed without its copy: ``on_failure_located`` runs the compile again."""
    _MISSED[0] = True


def on_failure_located(compile_: Callable[[], T]) -> T:
    """``compile_()`` without the copies that name a failing step; when a step failed
    (``missed``), ``compile_()`` again with them, and its failure, which names the step and
    the IR it received (the first failure if the second compile does not fail)."""
    _COPYING[0], _MISSED[0] = False, False
    try:
        return compile_()
    except SnippetFailure as failure:
        if not _MISSED[0]:
            raise
        first = failure
    finally:
        _COPYING[0] = True
    compile_()
    raise first


@contextmanager
def marked(found: Triage | Callable[[], Triage]) -> Iterator[None]:
    """While the step ``found`` describes runs, the progress file (if any) holds it
    (``found`` may be a function giving it: called only when there is a file)."""
    path = progress_file()
    if path is None:
        yield
        return
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(group_json(found() if callable(found) else found), f)
    os.replace(path + ".tmp", path)  # whole, whenever the crash comes
    try:
        yield
    finally:  # it ran, or failed with an answer: the file names none
        os.unlink(path)


def translation(module: Any) -> Triage:
    """What a translation to LLVM IR received, and ``mlir-translate``'s command for it. In
    generic form: ``mlir-translate`` registers the dialects it translates alone, and reads the
    others' ops as unregistered ones, which its translation then rejects as the item's did."""
    text = module.operation.get_asm(enable_debug_info=True, print_generic_op_form=True)
    return received("translation", text, "mlir-translate", ["--allow-unregistered-dialect", "--mlir-to-llvmir"])


# the pass of a front end's legalization that converts its ops to linalg (what left one unconverted)
LEGALIZING = {"stablehlo": "stablehlo-legalize-to-linalg", "torch": "convert-torch-to-linalg"}


def leftover(kind: str, pipeline: str, given: str, left: list[str]) -> Triage:
    """The legalization of ``kind`` (``pipeline``, which received ``given``) left the ops
    ``left`` unconverted, which the plugin's own check found (no pass failed): the pass that
    should have converted them, and torch-mlir-opt's command that runs the legalization on
    that IR; its reproducer fails when they are still there (``Triage.left_ops``)."""
    return Triage(failing_pass=LEGALIZING.get(kind, f"{kind} legalization"), before_pass_ir=given,
                  failing_pipeline=pipeline, failing_tool="torch-mlir-opt", left_ops=sorted(set(left)))


def imported(text: str, tool: str) -> Triage:
    """What a parse received (``import``), and the tool that parses and verifies it as the
    worker's context does (unregistered dialects allowed)."""
    return received("import", text, tool, ["--allow-unregistered-dialect"])


def received(step: str, ir: Any, tool: str, args: list[str]) -> Triage:
    """What a step that is not a pass of a pipeline received, and the command that runs it
    alone on that IR (``failing_tool`` and ``failing_args``; the IR's file is added last):
    ``import`` (``mlir-opt`` parses and verifies), ``translation`` (``mlir-translate``)."""
    text = ir if isinstance(ir, str) else ir.operation.get_asm(enable_debug_info=True)
    return Triage(failing_pass=step, before_pass_ir=text, failing_tool=tool, failing_args=args)


def plugin_step(name: str, module: Any, step: Callable[[], T]) -> T:
    """``step()``, one of the plugin's own Python steps on ``module``, named
    ``plugin:<name>``: an exception in it fails the compile naming the step, with the IR it
    received (no command-line tool runs it: its reproducer says so)."""
    snapshot = module.operation.clone() if copying() else None
    try:
        found = Triage(failing_pass=f"plugin:{name}")
        if progress_file() and snapshot is not None:
            found.before_pass_ir = snapshot.get_asm(enable_debug_info=True)
        with marked(found):
            done = step()
        _LAST_STEP[:] = [found.failing_pass]
        return done
    except SnippetFailure:
        raise  # the step's own verdict (unsupported, ...)
    except Exception as error:
        if snapshot is None:
            missed()
        else:
            found.before_pass_ir = snapshot.get_asm(enable_debug_info=True)
        raise SnippetFailure(Kind.COMPILE_ERROR, f"plugin:{name} failed: {type(error).__name__}: {error}",
                             triage=found) from None
    finally:
        if snapshot is not None:
            snapshot.erase()


def locate(snapshot: Any, pipeline: str, pass_manager: Callable[[str], Any]) -> Triage | None:
    """The failing pass (``failing_pass``), the IR it received (``before_pass_ir``) and the
    pipeline that runs it alone (``failing_pipeline``), found by running ``pipeline``'s
    passes one at a time on ``snapshot`` (a copy of the module before the pipeline); with
    the command-line tool whose passes these are (``failing_tool``: ``torch-mlir-opt`` for
    torch-mlir's bindings, else ``mlir-opt``); ``after_step``: the plugin's step that ran
    last before them, which no command-line tool runs. None when each runs: ``snapshot`` is then
    lowered by the whole pipeline. Each pass is ``marked`` while it runs."""
    tool = tool_of(pass_manager)
    for written, alone in steps(pipeline):
        before = snapshot.get_asm(enable_debug_info=True)  # with the snippet's locations
        found = Triage(failing_pass=written, before_pass_ir=before, failing_pipeline=alone, failing_tool=tool,
                       after_step=_LAST_STEP[0] if _LAST_STEP else "")
        try:
            with marked(found):
                pass_manager(alone).run(snapshot)
        except Exception:
            return found
    return None
