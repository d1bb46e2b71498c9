"""A failed or crashed compile's reproducer, kept beside its artifacts whatever the options:
the IR the failing step was given (``before-<pass>.mlir``) and ``reproduce.sh``, which runs
that step alone on it with the installed command-line tool (``mlir-opt``, ``torch-mlir-opt``
for the StableHLO and torch legalizations, ``mlir-translate`` for the translation to LLVM IR)
and fails, or dies by the same signal, as the item did.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from pytest_mlir_snippets.mlirtext.native import native_tool
from pytest_mlir_snippets.protocol import Kind, Response

_UNSAFE = re.compile(r"[^\w.\-]+")


def remove(folder: Path) -> None:
    """A reproducer an earlier run left in ``folder``, gone (the item compiles now): the
    folder too when nothing else is in it."""
    if not folder.is_dir():  # the common case: one stat, not a glob per kind of file
        return
    kept = [path for path in (folder / "reproduce.sh", folder / "input.mlir", folder / "driver.mlir",
                              folder / "reproduce.vmfb", *folder.glob("before-*.mlir"), *folder.glob("input_*.npy"),
                              *folder.glob("expected_output_*.bin"))
            if path.is_file()]
    if not kept:
        return
    for path in kept:
        path.unlink(missing_ok=True)
    if {p.name for p in folder.iterdir()} <= {"snippet.mlir"}:
        (folder / "snippet.mlir").unlink(missing_ok=True)
        folder.rmdir()


def write(folder: Path, response: Response, title: str) -> Path | None:
    """``reproduce.sh`` (and the IR it reads) in ``folder`` for a compile that failed or
    crashed in a step the worker named, replacing an earlier one; None when it named none
    (the failure is elsewhere) or the step is one of the plugin's own Python steps, which no
    command-line tool runs (its ``before-plugin_<step>.mlir`` is kept alone)."""
    triage = response.triage
    if triage is None or not triage.failing_pass or not triage.before_pass_ir:
        return None
    remove(folder)
    folder.mkdir(parents=True, exist_ok=True)
    failing = triage.failing_pass
    before = folder / f"before-{_UNSAFE.sub('_', failing.split('{')[0])}.mlir"
    before.write_text(triage.before_pass_ir)
    if not triage.failing_tool:
        return None
    args = (list(triage.failing_args) if triage.failing_args is not None else
            ["--allow-unregistered-dialect", f"--pass-pipeline={triage.failing_pipeline}"])
    tool_name = triage.failing_tool
    about = _about(failing, before.name, tool_name, triage.after_step, bool(triage.left_ops))
    if triage.failing_input:  # the whole compile, on the text the tool was given
        (folder / "input.mlir").write_text(triage.failing_input)
        command = [native_tool(tool_name), "input.mlir", *args]
    else:
        command = [native_tool(tool_name), *args, before.name]
    script = folder / "reproduce.sh"
    run = " ".join(shlex.quote(part) for part in command)
    script.write_text("#!/bin/sh\n"
                      f"# {title}: {response.message.splitlines()[0] if response.message else response.kind.value}\n"
                      + "".join(f"# {line}\n" for line in about)
                      + f"# It fails{', killed by the same signal,' if response.kind is Kind.CRASH else ''} "
                      "as the item's compile did.\n"
                      'case $0 in */*) cd "${0%/*}" || exit 2 ;; esac\n'
                      + (_left_check(run, failing, triage.left_ops) if triage.left_ops else f"exec {run}\n"))
    script.chmod(0o755)
    return script


STACK_LINES = 40  # of a native stack shown: the frames nearest the fault


def native_stack(script: Path, timeout: float, memory_limit: int | None = None) -> str:
    """The native stack a crashed compile's ``reproduce.sh`` prints (LLVM's ``Stack dump:``,
    the tool's frames where the worker's report has only the plugin's Python ones), at most
    ``STACK_LINES`` lines; "" when it prints none within ``timeout`` seconds. ``memory_limit``:
    the worker's address-space limit, which the rerun keeps (a crash out of memory would
    otherwise allocate without bound)."""
    import resource
    import subprocess

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if memory_limit:
            resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))

    try:
        done = subprocess.run(["/bin/sh", str(script)], capture_output=True, text=True, timeout=timeout,
                              check=False, preexec_fn=limits)
    except (subprocess.TimeoutExpired, OSError):
        return ""
    start = done.stderr.find("Stack dump:")
    if start < 0:
        return ""
    lines = done.stderr[start:].splitlines()
    return "\n".join(lines[:STACK_LINES] + ([f"... ({len(lines) - STACK_LINES} more lines: sh {script})"]
                                            if len(lines) > STACK_LINES else []))


def _left_check(run: str, failing: str, left: list[str]) -> str:
    """The script's body for ops a legalization left (no pass failed; the plugin's check did):
    the legalization's output printed, and an error, status 1, for each op still in it (shell
    builtins only: the script runs with an empty PATH)."""
    said = [shlex.quote(f"error: {failing} left {op!r} without a lowering to linalg") for op in left]
    checks = "".join(f"case $out in *{shlex.quote(op)}[!a-zA-Z0-9_.]*) echo {line} >&2; left=1 ;; esac\n"
                     for op, line in zip(left, said))
    return f"out=$({run}) || exit $?\nprintf '%s\\n' \"$out\"\nleft=0\n{checks}exit $left\n"


def _about(failing: str, before: str, tool_name: str, after_step: str, left: bool = False) -> list[str]:
    """The script's comment: what it runs, on what."""
    if tool_name == "iree-compile":
        alone = [] if failing in ("iree-compile", "import") else [
            f"{before} is the IR {failing} received, with its pipeline: `iree-opt --run-reproducer {before}`",
            "runs that pass alone."]
        return ["input.mlir is the text IREE's compiler was given; this compiles it with the item's flags.", *alone]
    if failing == "import":
        return [f"{before} is the text the compile parsed; this parses and verifies it."]
    if failing == "translation":
        return [f"{before} is the IR the translation to LLVM IR received (after the pipeline and the",
                "plugin's steps), in generic form; this translates it."]
    start = [f"It starts from the IR right after {after_step}, a Python step of the plugin's that no",
             "command-line tool runs."] if after_step else []
    if left:
        return [f"{before} is the IR the legalization around {failing} received (the plugin's steps and passes",
                "before it applied); this runs that legalization's pipeline on it. No pass fails: the plugin's",
                f"check finds the ops {failing} leaves without a lowering, and so does this script.", *start]
    return [f"{before} is the IR {failing} received (the plugin's steps and passes before it applied);",
            "this runs that pass alone on it.", *start]
