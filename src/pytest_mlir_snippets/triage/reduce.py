"""``mlir-snippets reduce FILE::FUNC [--out PATH]``: the smallest snippet that still fails as
the item ``FILE::FUNC`` does (``triage/interesting.py`` says what "as" means).

Upstream's ``mlir-reduce`` first (the wheel's, found as the plugin finds its other tools),
with an interestingness script that runs the plugin's sandbox worker on each candidate
(over a socket: ``_upstream``); then the plugin's own op-deletion loop
(``triage/opdeletion.py``) on what it left, where upstream's bindings parse the snippet.
The result is written to ``--out`` (default ``ops_mlir_snippets/<FILE>/<FUNC>/<target>/reduced.mlir``
under the current folder, the item's artifact folder with the output root there, which the
next run does not collect) and its path and size before and after are printed, in lines and
ops. A snippet that does not parse is declined (exit status 2), as is a mismatch with
recorded outputs whose failing positions cannot be told (``triage/interesting.py``).

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import argparse
import shlex
import socketserver
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from pytest_mlir_snippets.client import Sandbox
from pytest_mlir_snippets.golden.recorded import RecordedDataError
from pytest_mlir_snippets.mlirtext.litscript import tool
from pytest_mlir_snippets.paths import artifact_dir
from pytest_mlir_snippets.protocol import Recorded
from pytest_mlir_snippets.triage.interesting import (
    Spec,
    against_recorded,
    failing_positions,
    failure_of,
    interesting,
    opened,
)
from pytest_mlir_snippets.triage.opdeletion import count_ops, function_type, parse_error, shrink
from pytest_mlir_snippets.triage.subject import SubjectError, find

REDUCED = "reduced.mlir"  # in the item's artifact folder: never collected as a snippet file


class ReduceError(Exception):
    """Why an item cannot be reduced, in one line."""


def size(text: str) -> str:
    ops = count_ops(text)
    return f"{len([line for line in text.splitlines() if line.strip()])} lines, {'?' if ops is None else ops} ops"


def reduce(node: str, out: Path | None, target: str, pipeline: str | None, timeout: float) -> tuple[Path, str, str]:
    """Reduce ``node``; (where the result went, its size before, after)."""
    try:
        path, source, function = find(node)
    except SubjectError as error:
        raise ReduceError(str(error)) from None
    uid, text = function.uid, source.split(function).text
    spec = Spec(function.name, str(path.resolve()), len(source.functions), target, pipeline, timeout)
    try:
        golden = spec.golden()
    except RecordedDataError as error:
        raise ReduceError(f"{node}: recorded golden data: {error}") from None
    sandbox = opened(spec)
    try:
        spec.kind, spec.first, spec.compiles = failure_of(sandbox, text, spec, golden)
        if spec.kind in ("pass", "unsupported"):
            raise ReduceError(f"{node} does not fail on {target} ({spec.kind}): nothing to reduce")
        if count_ops(text) is None:
            raise ReduceError(f"{node} does not parse ({parse_error(text)}): nothing to reduce, fix the syntax first")
        if against_recorded(spec, golden):
            _keep_positions(sandbox, text, spec, golden, node)
        before = size(text)

        def still_fails(candidate: str) -> bool:
            return interesting(sandbox, candidate, spec, golden)

        text = shrink(_upstream(text, still_fails, timeout) or text, still_fails)
    finally:
        sandbox.close()
    target_path = out or artifact_dir(Path.cwd(), path.resolve(), uid, target, Path.cwd()) / REDUCED
    target_path.parent.mkdir(parents=True, exist_ok=True)
    target_path.write_text(text)
    return target_path, before, size(text)


def _keep_positions(sandbox: Sandbox, text: str, spec: Spec, golden: Recorded | None, node: str) -> None:
    """A mismatch with recorded outputs: what a candidate keeps (the function's type, its
    failing output positions), or a ReduceError saying why it cannot be told."""
    assert golden is not None
    spec.interface = function_type(text, spec.function)
    spec.positions = failing_positions(sandbox, text, spec, golden)
    if spec.interface is None or spec.positions is None:
        raise ReduceError(f"{node}: declined: its results on the recorded inputs could not be read back to find "
                          "which of them differ, and kind alone would keep any smaller snippet "
                          "(return %arg0 mismatches too)")
    if not any(spec.positions):
        raise ReduceError(f"{node}: declined: no element of its results is outside the tolerance (the mismatch is "
                          "PCC's or the whole array's), so no failing position can be kept")


# the interestingness script's Python: the candidate's path to the reducing process, which
# runs it in its sandbox worker; its answer (1: interesting) is the exit status
_ASK = ("import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); "
        "s.sendall(sys.argv[2].encode() + b'\\n'); sys.exit(int(s.recv(1) == b'1'))")


def _upstream(text: str, still_fails: Callable[[str], bool], timeout: float) -> str | None:
    """What ``mlir-reduce`` makes of ``text`` (None: nothing smaller). Its interestingness
    script asks this process, over a Unix socket, to run each candidate in the sandbox
    worker already started (a worker per candidate would cost a second each)."""

    known: dict[str, bool] = {}  # mlir-reduce tries the same text again and again

    class Answer(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            candidate = Path(self.rfile.readline().decode().strip()).read_text()
            if candidate not in known:
                known[candidate] = still_fails(candidate)
            self.wfile.write(b"1" if known[candidate] else b"0")

    with tempfile.TemporaryDirectory(prefix="mlir-reduce-") as folder:
        work = Path(folder)
        (work / "input.mlir").write_text(text)
        script = work / "interesting.sh"
        script.write_text("#!/bin/sh\n# interesting (exit 1): the candidate still fails as the item does\n"
                          f"exec {shlex.quote(sys.executable)} -S -c {shlex.quote(_ASK)} \"$1\" \"$2\"\n")
        script.chmod(0o755)
        with socketserver.UnixStreamServer(str(work / "ask"), Answer) as server:
            threading.Thread(target=server.serve_forever, daemon=True).start()
            try:
                done = subprocess.run([tool("mlir-reduce"), "--allow-unregistered-dialect", str(work / "input.mlir"),
                                       f"--reduction-tree=traversal-mode=0 test={script} test-arg={work / 'ask'}",
                                       "-o", str(work / "reduced.mlir")],
                                      capture_output=True, text=True, timeout=timeout * 10, check=False)
            except (subprocess.TimeoutExpired, OSError):  # too slow, or no mlir-reduce here
                return None
            finally:
                server.shutdown()
        reduced = work / "reduced.mlir"
        if done.returncode != 0 or not reduced.is_file() or len(reduced.read_text()) >= len(text):
            return None
        return reduced.read_text()


def reduce_command(args: argparse.Namespace) -> int:
    try:
        path, before, after = reduce(args.node, Path(args.out) if args.out else None, args.target, args.pipeline,
                                     args.timeout)
    except (ReduceError, OSError) as error:
        print(f"mlir-snippets reduce: {error}", file=sys.stderr)
        return 2
    print(f"wrote {path}: {before} before, {after} after")
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    shrink_it = commands.add_parser("reduce", help="the smallest snippet that still fails as FILE::FUNC does "
                                    "(mlir-reduce, then the plugin's own op deletion)")
    shrink_it.add_argument("node", metavar="FILE::FUNC", help="as in the node id: ops.mlir::add_0")
    shrink_it.add_argument("--out", metavar="PATH", help="default: ops_mlir_snippets/<FILE>/<FUNC>/<TARGET>/"
                           "reduced.mlir here (never collected)")
    shrink_it.add_argument("--target", default="cpu", help="the item's target (default cpu)")
    shrink_it.add_argument("--pipeline", metavar="PIPELINE", help="the item's --mlir-pipeline, if it had one")
    shrink_it.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                           help="per run of a candidate (default 60)")
    shrink_it.set_defaults(run=reduce_command)
