"""The docs' code blocks are tests: every ``python`` block of README.md and docs/*.md runs as
a test module, every ``sh`` block runs as written in a folder holding the files the docs'
commands name (``ops/``, ``model.mlir``, ``mymodels.py``, ...). A block that cannot run
here says so on the line above it, in an HTML comment that neither GitHub nor the site
shows:

- ``<!-- docs-test: skip: WHY -->``: not run (it installs packages, needs hardware);
- ``<!-- docs-test: run by PATH[::TEST], ... -->``: another test or CI step runs it (the
  files and tests named must exist, and the block's long options appear in them).

Either way its commands are checked: pytest's ``--mlir-*`` options, the ``mlir-snippets``
subcommands and their options, the extras ``pip install`` names. A block of any other
language is no command or test (``json``, ``yaml``, ``mlir``, output with none); a shell
block tagged otherwise (``bash``, ``console``) fails, so none escapes unrun."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_mlir_snippets.settings import OPTIONS
from pytest_mlir_snippets.tools import cli

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUN = ("python", "sh")  # the languages of tests and commands
OTHER = ("", "json", "yaml", "mlir")  # configs, MLIR fragments, printed output
FENCE = re.compile(r"^```(\S*)[ \t]*$")
MARKER = re.compile(r"^<!-- docs-test: (skip: .+|run by .+) -->$")
ADD = """func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence
    language: str
    text: str
    marker: str  # what the comment above says ("skip: ...", "run by ..."), else ""

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks() -> list[Block]:
    found = []
    for page in PAGES:
        lines = page.read_text().splitlines()
        i = 0
        while i < len(lines):
            opening = FENCE.match(lines[i])
            if opening is None:
                i += 1
                continue
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
            marker = MARKER.match(before)
            found.append(Block(page, i + 1, opening.group(1), "\n".join(lines[i + 1:end]) + "\n",
                               marker.group(1) if marker else ""))
            i = end + 1
    return found


BLOCKS = blocks()
TO_RUN = [b for b in BLOCKS if b.language in RUN and not b.marker]


def test_every_block_is_run_or_says_why_not() -> None:
    assert TO_RUN, "no docs block runs"
    unknown = [f"{b.where} ```{b.language}" for b in BLOCKS if b.language not in RUN + OTHER]
    assert not unknown, f"tag shell blocks sh (they run) and tests python, or add the language to OTHER: {unknown}"
    stray = [b.where for b in BLOCKS if b.marker and b.language not in RUN]
    assert not stray, f"a docs-test marker above a block that is no test or command: {stray}"
    malformed = [f"{page.relative_to(ROOT)}:{n}" for page in PAGES
                 for n, line in enumerate(page.read_text().splitlines(), 1)
                 if line.startswith("<!--") and "docs-test" in line and not MARKER.match(line)]
    assert not malformed, f"not a docs-test marker (a block below it would run): {malformed}"


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.marker.startswith("run by ")], ids=lambda b: b.where)
def test_a_block_run_elsewhere_names_what_runs_it(block: Block) -> None:
    sources = []
    for target in block.marker.removeprefix("run by ").split(", "):
        path, _, test = target.partition("::")
        assert (ROOT / path).is_file(), f"{block.where}: {path} is not a file"
        text = (ROOT / path).read_text()
        assert not test or f"def {test}(" in text, f"{block.where}: no test {test} in {path}"
        sources.append(text)
    options = set(re.findall(r"(?<![\w-])--[a-z][\w-]*", block.text)) - {"--help"}
    unused = sorted(o for o in options if not any(o in text for text in sources))
    assert not unused, f"{block.where}: options no test it names uses: {unused}"


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.language == "sh"], ids=lambda b: b.where)
def test_every_command_names_what_exists(block: Block, capsys: pytest.CaptureFixture[str]) -> None:
    """Run or not, a command's options, subcommands and extras are the plugin's."""
    flags = {o.flag for o in OPTIONS}
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    for words in _commands(block.text):
        program = Path(words[0]).name
        if program == "pytest":
            unknown = [w.split("=")[0] for w in words if w.startswith("--mlir") and w.split("=")[0] not in flags]
            assert not unknown, f"{block.where}: no such option: {unknown}"
        elif program == "mlir-snippets":
            with pytest.raises(SystemExit):
                cli.main([words[1], "--help"])
            usage = capsys.readouterr().out
            unknown = [w for w in words[2:] if w.lstrip("[").startswith("--") and w.lstrip("[") not in usage]
            assert not unknown, f"{block.where}: mlir-snippets {words[1]} has no {unknown}"
        elif program == "pip":
            named = {e for w in words for e in re.findall(r"\[([\w,]+)\]", w) for e in e.split(",")}
            assert named <= extras, f"{block.where}: no such extra: {named - extras}"


def _commands(text: str) -> list[list[str]]:
    """The block's commands as words: lines joined at a backslash, comments dropped, split at
    ``&&``, ``||``, ``;`` and ``|``."""
    commands: list[list[str]] = [[]]
    for line in text.replace("\\\n", " ").splitlines():
        for word in [*shlex.split(line, comments=True), ";"]:
            if word in ("&&", "||", ";", "|"):
                commands.append([])
            else:
                commands[-1].append(word)
    return [c for c in commands if c]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """The files the docs' commands name: a snippet folder, a model, a PyTorch model."""
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "add.mlir").write_text(ADD)
    for name in ("ops.mlir", "model.mlir", "more.mlir"):
        (tmp_path / name).write_text(ADD)
    shutil.copy(ROOT / "examples" / "runs" / "cpu_mlp" / "reference_model.py", tmp_path / "mymodels.py")
    return tmp_path


@pytest.mark.parametrize("block", [b for b in TO_RUN if b.language == "sh"], ids=lambda b: b.where)
def test_the_commands_run_as_written(block: Block, workdir: Path) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-e", "-c", block.text], cwd=workdir, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, f"{block.where}:\n{block.text}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


@pytest.mark.parametrize("block", [b for b in TO_RUN if b.language == "python"], ids=lambda b: b.where)
def test_the_python_blocks_are_passing_test_modules(block: Block, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_block=block.text)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    outcomes = result.parseoutcomes()
    assert result.ret == 0 and outcomes.get("passed", 0) > 0, result.stdout.str()[-3000:]
