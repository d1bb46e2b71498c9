"""``mlir-snippets record-goldens FILE[::FUNC] --from REFERENCE``: sidecars that pin today's verdicts.

For each public function of FILE (or FUNC alone), a cpu worker makes the seeded inputs its
``[execute]`` is given (``--seed``, ``--dynamic-dim`` and its ``// mlir-snippets: inputs=``
line, as the plugin's), a worker of the reference's target computes the outputs on them,
and ``<stem>.<function>.npz`` is written beside FILE (``golden/recorded.py`` reads it): its
inputs, outputs and ``reference``, the reference's name, which the verdict shows. Every
step runs in the sandbox: a reference that crashes or hangs is one line, and no file.

References (``REFERENCES``): ``interpreter`` (StableHLO's reference interpreter),
``torch`` (PyTorch's ATen, op by op, for the torch dialect: ``worker/judging/torcheval.py``),
both asked of a cpu worker, and ``iree-cpu`` (IREE's compiler and runtime), of an iree-cpu worker.
An existing sidecar is never overwritten without ``--force``.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from pytest_mlir_snippets.client import Sandbox
from pytest_mlir_snippets.golden.recorded import REFERENCE
from pytest_mlir_snippets.mlirtext.directives import DirectiveError, directive
from pytest_mlir_snippets.mlirtext.splitter import Function, SnippetSource, SplitError
from pytest_mlir_snippets.paths import sidecar_name
from pytest_mlir_snippets.protocol import Golden, Options, Response
from pytest_mlir_snippets.settings import DEFAULT_TIMEOUT
from pytest_mlir_snippets.triage.subject import SubjectError, find


@dataclass(frozen=True)
class Source:
    """A reference: its name (``--from``), the target of the worker asked for it, the golden
    its answer must have."""

    name: str
    target: str
    golden: Golden
    what: str  # in words, for errors and --help


REFERENCES = {s.name: s for s in (
    Source("interpreter", "cpu", Golden.INTERPRETER, "StableHLO's reference interpreter (StableHLO snippets)"),
    Source("torch", "cpu", Golden.TORCH, "PyTorch's ATen, op by op (torch-dialect snippets)"),
    Source("iree-cpu", "iree-cpu", Golden.differential("iree-cpu"), "IREE's compiler and runtime on the CPU"),
)}


class RecordError(Exception):
    """Why a function's sidecar was not written, in one line."""


def subjects(spec: str) -> tuple[Path, SnippetSource, list[Function]]:
    """The file ``spec`` names and its functions to record: FUNC alone, else every public one."""
    if "::" in spec:
        try:
            path, source, function = find(spec)
        except SubjectError as error:
            raise RecordError(str(error)) from None
        return path, source, [function]
    path = Path(spec)
    try:
        source = SnippetSource(path.read_text())
    except (OSError, UnicodeDecodeError, SplitError) as error:
        raise RecordError(f"cannot read {spec}: {error}") from None
    if not source.functions:
        raise RecordError(f"{spec} has no public function")
    return path, source, list(source.functions)


def _one_line(what: str, response: Response) -> str:
    first = response.message.splitlines()[0] if response.message else ""
    return f"{what}: {response.kind.value}" + (f": {first}" if first else "")


def record(inputs_from: Sandbox, reference: Sandbox, source: Source, module: str, function: Function,
           options: Options, timeout: float) -> tuple[list[np.ndarray], list[np.ndarray], str]:
    """(inputs, outputs, the reference's name) for ``function``, or a RecordError."""
    try:
        found = directive(function.comments)
    except DirectiveError as error:
        raise RecordError(f"the line above @{function.name} cannot be read: {error}") from None
    own = Options(target="cpu", seed=options.seed, dynamic_dim=options.dynamic_dim, input_range=found.inputs)
    made = inputs_from.inputs(module, function.name, own, timeout)
    if not made.ok or made.values is None:
        raise RecordError(_one_line("its seeded inputs could not be made (the cpu target's compile)", made))
    inputs = [np.asarray(v) for v in made.values]
    answer = reference.reference(module, function.name, replace(own, target=reference.target), inputs, timeout)
    if not answer.ok or answer.values is None or answer.verdict is None:
        raise RecordError(_one_line(f"the reference ({source.what}) failed", answer))
    if answer.verdict.golden is not source.golden:
        raise RecordError(f"{source.what} does not take it (the {reference.target} worker answered with the "
                          f"{answer.verdict.reference})")
    return inputs, [np.asarray(v) for v in answer.values], answer.verdict.reference


def record_goldens(args: argparse.Namespace) -> int:
    try:
        path, source, functions = subjects(args.subject)
    except RecordError as error:
        print(f"mlir-snippets record-goldens: {error}", file=sys.stderr)
        return 2
    targets = [(f, path.with_name(sidecar_name(path, f.name))) for f in functions]
    existing = [t.name for _, t in targets if t.exists()]
    if existing and not args.force:
        print(f"mlir-snippets record-goldens: {', '.join(existing)} exist(s) already: give --force to overwrite "
              "(nothing was written)", file=sys.stderr)
        return 2
    chosen = REFERENCES[args.reference]
    options = Options(seed=args.seed, dynamic_dim=args.dynamic_dim)
    cpu = Sandbox("cpu")
    other = cpu if chosen.target == cpu.target else Sandbox(chosen.target)
    failed = 0
    try:
        for function, target in targets:
            try:
                inputs, outputs, name = record(cpu, other, chosen, source.split(function).text, function, options,
                                               args.timeout)
            except RecordError as error:
                print(f"mlir-snippets record-goldens: {path}::{function.uid}: {error}", file=sys.stderr)
                failed += 1
                continue
            arrays: dict[str, Any] = {**{f"input_{i}": v for i, v in enumerate(inputs)},
                                      **{f"output_{i}": v for i, v in enumerate(outputs)}, REFERENCE: np.array(name)}
            with target.open("wb") as file:
                np.savez(file, **arrays)
            print(f"wrote {target} ({len(inputs)} input(s), {len(outputs)} output(s) from {name})")
    finally:
        cpu.close()
        if other is not cpu:
            other.close()
    return 1 if failed else 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pin = commands.add_parser("record-goldens", help="write <stem>.<function>.npz sidecars: the seeded inputs and "
                              "an independent reference's outputs, so later runs are judged against them")
    pin.add_argument("subject", metavar="FILE[::FUNC]", help="a snippet file (every public function) or one function")
    pin.add_argument("--from", dest="reference", required=True, choices=tuple(REFERENCES),
                     help="; ".join(f"{name}: {s.what}" for name, s in REFERENCES.items()))
    pin.add_argument("--seed", type=int, default=0, help="as --mlir-seed (default 0)")
    pin.add_argument("--dynamic-dim", type=int, default=4, help="as --mlir-dynamic-dim (default 4)")
    pin.add_argument("--force", action="store_true", help="overwrite existing sidecars")
    pin.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                     help=f"per function and step (default {DEFAULT_TIMEOUT:g})")
    pin.set_defaults(run=record_goldens)
