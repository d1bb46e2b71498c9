"""How a failed item reads: MLIR's diagnostics at file lines, metrics, worker output.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import pytest

from pytest_mlir_snippets.protocol import Diagnostic, Kind, Response

STDERR_MARKER = "--- captured stderr of the sandbox worker ---"


class ItemFailure(Exception):
    """An MLIR outcome other than pass, with MLIR's words: raised by snippet and iteration
    items, and by ``mlir_device`` calls in Python tests. Each kind has its public subclass
    (``FAILURES``), so that ``pytest.mark.xfail(raises=Crash)`` expects one kind.
    ``response``: the worker's answer (kind, message, diagnostics, metrics, stderr);
    ``text``: the failure as shown (diagnostics at source lines), else the message."""

    kind: Kind | None = None

    def __init__(self, response: Response, text: str = "") -> None:
        super().__init__(text or response.message)
        self.response = response


class CompileError(ItemFailure):
    """The source does not parse, verify or lower (kind ``compile-error``)."""

    kind = Kind.COMPILE_ERROR


class ExecuteError(ItemFailure):
    """The compiled code ran and failed: a runtime error, inputs that do not fit (``execute-error``)."""

    kind = Kind.EXECUTE_ERROR


class GoldenMismatch(ItemFailure, AssertionError):
    """Results differ from the reference (``golden-mismatch``); an ``AssertionError`` too,
    as ``assert_close`` raises it."""

    kind = Kind.GOLDEN_MISMATCH


class Crash(ItemFailure):
    """The sandbox worker died: an abort (``LLVM ERROR``), a segfault, a kill for memory (``crash``)."""

    kind = Kind.CRASH


class Timeout(ItemFailure):
    """The call took longer than its timeout; the worker was killed (``timeout``)."""

    kind = Kind.TIMEOUT


class ContractError(ItemFailure):
    """An optimization-run iteration breaks its run's contract (``contract-error``)."""

    kind = Kind.CONTRACT_ERROR


class NoGolden(ItemFailure):
    """``--mlir-require-golden``: nothing independent to judge the results by (``no-golden``)."""

    kind = Kind.NO_GOLDEN


_SKIPPED: Any = pytest.skip.Exception  # pytest's Skipped, through its public name


class Unsupported(_SKIPPED):  # type: ignore[misc]
    """A dialect, type or feature the target cannot handle, or a device the machine lacks:
    a skip (pytest's skip exception), never a failure (``unsupported``)."""


for _public in (ItemFailure, CompileError, ExecuteError, GoldenMismatch, Crash, Timeout, ContractError, NoGolden,
                Unsupported):
    _public.__module__ = "pytest_mlir_snippets"  # where users import them from, as tracebacks name them
Unsupported.__module__ = "builtins"  # as pytest's Skipped: -rs shows "Unsupported: <why>"

# failure kind -> the class items and the device fixture raise
FAILURES: dict[str, type[ItemFailure]] = {
    cls.kind.value: cls for cls in (CompileError, ExecuteError, GoldenMismatch, Crash, Timeout, ContractError,
                                    NoGolden) if cls.kind is not None}


def failure_of(response: Response, text: str = "") -> ItemFailure:
    """The exception of ``response``'s kind (an ``ItemFailure`` for a kind without its own)."""
    return FAILURES.get(response.kind.value, ItemFailure)(response, text)


class MlirFailureRepr(str):
    """A failure as its item's ``repr_failure`` returns it: text, which pytest prints as it
    is (a ``str`` is the public return type; the terminal-drawing class behind tracebacks is
    private). The class marks the text as the plugin's own view of an MLIR outcome, not a
    traceback, for the record (``MlirItem.record_report``, which hands pytest plain ``str``:
    xdist's serializer takes no subclass)."""

    __slots__ = ()


class Located(Protocol):
    """What formatting needs of an item: where it is, and how split lines map back."""

    path: Path
    stage: str

    @property
    def function_name(self) -> str: ...

    @property
    def function_line(self) -> int: ...

    def original_line(self, line: int) -> int | None: ...


# Lines of a worker's output that say what went wrong, for reports and signatures.
_NOTEWORTHY = re.compile(
    r"(error:|LLVM ERROR|Assertion .* failed|JIT session error|Symbols not found|terminate called"
    r"|required .*memory usage .*exceeds|[Oo]ut of memory|MemoryError|bad_alloc|Segmentation fault"
    r"|Traceback|Error: |can't find feasible allocation|required L1 memory|usable space is|No parser found)"
)


# faulthandler's report of the worker's own Python frames when native code kills it: where
# in the plugin it was (the step is named in the message), its thread's address and the
# loaded extension modules, which change with the run (-n 0 or xdist) and say nothing of MLIR
_WORKER_FRAMES = re.compile(r"(?:Current thread|Thread) 0x[0-9a-f]+ \(most recent call first\):"
                            r"|  File \".*\", line \d+ in \S+|  <no Python frame>|Extension modules: .*"
                            r"|  Garbage-collecting")


def shown_stderr(text: str) -> str:
    """A worker's output as reports show it: without faulthandler's Python frames and
    module list (MLIR's own words, the native stack and ``Fatal Python error: <signal>`` kept)."""
    if "Fatal Python error" not in text:
        return text
    kept = [line for line in text.splitlines() if not _WORKER_FRAMES.fullmatch(line)]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).rstrip() + "\n"


def extract_diagnostics(text: str, limit: int = 20) -> list[str]:
    """The noteworthy lines of captured output (errors, aborts, allocator messages)."""
    found: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if line and _NOTEWORTHY.search(line) and line not in found:
            found.append(line)
            if len(found) == limit:
                break
    return found


def first_error(response: Response) -> str:
    errors = [d for d in response.diagnostics if d.severity == "error"]
    return errors[0].message if errors else response.message.splitlines()[0] if response.message else ""


def format_diagnostic(d: Diagnostic, item: Located, indent: str = "") -> list[str]:
    where = str(item.path)
    if d.line is not None:
        line = item.original_line(d.line)
        where += f":{line}:{d.column}" if line is not None else f" (split module line {d.line}:{d.column})"
    lines = [f"{indent}{where}: {d.severity}: {d.message}"]
    for note in d.notes:
        lines += format_diagnostic(note, item, indent + "  ")
    return lines


def diagnostic_lines(response: Response, item: Located) -> list[str]:
    """Structured diagnostics at file lines, then what the worker's output adds."""
    lines: list[str] = []
    for d in response.diagnostics:
        lines += format_diagnostic(d, item)
    return lines + [line for line in extract_diagnostics(response.stderr) if line not in lines]


# what a failure signature masks in MLIR's and the worker's words: paths, hex, numbers
_MASKS = ((re.compile(r"(?<![\w.])(?:/[\w.\-~]+)+"), "<path>"), (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
          (re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:e[-+]?\d+)?"), "N"))
Candidate = tuple[bool, str]  # a line a failure signature may be: (it says error, the line masked)


def masked(text: str) -> str:
    """The first line of ``text`` with paths, hex and numbers masked."""
    text = text.splitlines()[0] if text else ""
    for pattern, mask in _MASKS:
        text = pattern.sub(mask, text)
    return text.strip()


def signature_lines(diagnostics: list[Diagnostic], path: Path, output: list[str] | None = None,
                    original_line: Callable[[int], int | None] = lambda line: line) -> list[Candidate]:
    """A failure's diagnostics (each note after its own), then its worker's noteworthy output
    lines, as candidates for its signature: where each is (a file's path is ``<path>``, its
    line and column ``N``), its severity and MLIR's words, masked."""
    found: list[Candidate] = []
    place = "<path>" if path.is_absolute() else str(path)
    for d in diagnostics:
        where = place if d.line is None else \
            f"{place}:N:N" if original_line(d.line) is not None else f"{place} (split module line N:N)"
        said = f"{d.severity}: {d.message}"
        found.append(("error" in said.lower(), f"{where}: {masked(said)}"))
        found += signature_lines(d.notes, path, None, original_line)
    return found + [("error" in line.lower(), masked(line)) for line in output or []]


def failure_signature(candidates: list[Candidate], message: str) -> str:
    """What groups failures of one root cause: the first candidate that says error, else the
    first candidate, else the message, masked."""
    return next((line for error, line in candidates if error), candidates[0][1] if candidates else masked(message))


def item_signature(response: Response | None, path: Path, original_line: Callable[[int], int | None] | None,
                   with_output: bool, message: str) -> str:
    """An item's failure signature: from its failed response's diagnostics (and, ``with_output``,
    its worker's noteworthy output), else from ``message``."""
    failed = response is not None and response.kind is not Kind.PASS
    candidates = signature_lines(response.diagnostics, path, extract_diagnostics(response.stderr) if with_output
                                 else None, original_line or (lambda line: line)) if response and failed else []
    return failure_signature(candidates, message)


def expectation_line(kind: Kind, expected: str | None) -> list[str]:
    """A failure of another kind than the expected one says so first."""
    if not expected or expected in ("any failure", "fail") or expected == kind.value:
        return []
    return [f"expected {expected}, got {kind.value}"]


def format_failure(response: Response, item: Located, expected: str | None = None) -> str:
    head = f"{response.kind.value}: @{item.function_name} ({item.path.name}:{item.function_line}) [{item.stage}]"
    lines = [*expectation_line(response.kind, expected), head, response.message]
    for d in response.diagnostics:
        lines += format_diagnostic(d, item)
    if response.triage is not None and response.triage.diverged_after:
        lines.append(f"diverged after: {response.triage.diverged_after} (--mlir-bisect)")
    if response.metrics:
        lines.append("metrics: " + ", ".join(f"{k}={v:.6g}" for k, v in response.metrics.items()))
    if response.stderr.strip():
        lines += [STDERR_MARKER, shown_stderr(response.stderr).rstrip()]
    return "\n".join(lines)
