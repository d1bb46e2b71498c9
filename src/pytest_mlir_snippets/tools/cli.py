"""``mlir-snippets``: commands around the plugin.

    mlir-snippets report a.json b.json [--out DIR] [--json merged.json]
    mlir-snippets import-torch MODULE:FACTORY OUTDIR
    mlir-snippets sysdesc
    mlir-snippets inventory MODEL.mlir... [--out DIR] | --from-torch MODULE:FACTORY --out DIR
    mlir-snippets new-iteration RUN [--from vN]
    mlir-snippets export-lit FILE::FUNC [--out PATH] [--timeout SECONDS]
    mlir-snippets reduce FILE::FUNC [--out PATH]
    mlir-snippets record-goldens FILE[::FUNC] --from interpreter|torch|iree-cpu [--force]
    mlir-snippets onnx-tests [--target T] [-k PATTERN] [PYTEST ARGS] | --write DIR

``report`` rebuilds the run reports of one or several runs (CI shards, xdist
across hosts) from the files ``--mlir-json`` wrote; ``import-torch`` writes a
PyTorch model as ``model_linalg.mlir`` with its reference (``torch_import.py``);
``sysdesc`` writes tt-mlir's system descriptor with ``ttrt query --save-artifacts``;
``new-iteration`` starts an optimization run's next iteration (``new_iteration.py``);
``export-lit`` writes a function as an integration test (``triage/export_lit.py``);
``reduce`` shrinks a failing item's snippet (``triage/reduce.py``);
``record-goldens`` writes sidecars from an independent reference (``record_goldens.py``);
``onnx-tests`` runs ONNX's node test suite on a target (``onnx_tests.py``).

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path

from pytest_mlir_snippets.items.expectfile import ExpectationsError, load_expectations
from pytest_mlir_snippets.reporting.publish import RecordsError, publish, read_records, summary_lines
from pytest_mlir_snippets.settings import DEFAULT_TIMEOUT
from pytest_mlir_snippets.triage import reduce


def report(args: argparse.Namespace) -> int:
    documents = []
    for path in args.json_files:
        try:
            documents.append((path, json.loads(Path(path).read_text())))
        except (OSError, ValueError) as error:
            print(f"mlir-snippets report: cannot read {path}: {error}", file=sys.stderr)
            return 2
    try:
        records, functions, run, rootdir = read_records(documents)
    except RecordsError as error:
        print(f"mlir-snippets report: {error}", file=sys.stderr)
        return 2
    root = Path(args.out) if args.out else rootdir
    if args.out:
        for file in functions:
            (root / file).parent.mkdir(parents=True, exist_ok=True)
    elif not root.is_dir():
        print(f"mlir-snippets report: {root} does not exist here; give --out DIR", file=sys.stderr)
        return 2
    problems = publish(records, functions, root, run, Path(args.json) if args.json else None, rootdir)
    if args.update_expectations:
        try:
            load_expectations(Path(args.update_expectations), create=True).update(records, rootdir)
        except (ExpectationsError, OSError) as error:
            problems.append(f"could not update {args.update_expectations}: {error}")
    for line, _ in summary_lines(records, len(functions), notes=run.notes):
        print(line)
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if any(r.failed for r in records) or run.notes or problems else 0


def import_torch_command(args: argparse.Namespace) -> int:
    from pytest_mlir_snippets.tools.torch_import import import_torch

    try:
        path = import_torch(args.target, args.outdir, args.func_name)
    except (ValueError, ImportError, AttributeError, OSError) as error:
        print(f"mlir-snippets import-torch: {error}", file=sys.stderr)
        return 2
    print(f"wrote {path} (and reference.py, reference_state.pt, {path.stem}.{args.func_name}.npz)")
    return 0


def sysdesc(args: argparse.Namespace) -> int:
    """The system descriptor the ttmetal/ttnn targets need, from the machine's devices."""
    import shutil
    import subprocess

    from pytest_mlir_snippets.worker.targets.tt import DEFAULT_SYS_DESC, HOW_TO_GET

    ttrt = shutil.which("ttrt")
    if ttrt is None:
        return _generated_sysdesc(DEFAULT_SYS_DESC, HOW_TO_GET)
    done = subprocess.run([ttrt, "query", "--save-artifacts"], check=False)
    if done.returncode != 0 or not Path(DEFAULT_SYS_DESC).is_file():
        print(f"mlir-snippets sysdesc: `ttrt query --save-artifacts` failed (exit {done.returncode})",
              file=sys.stderr)
        return 1
    path = Path(DEFAULT_SYS_DESC).resolve()
    print(f"wrote {path}\nuse it: export SYSTEM_DESC_PATH={path}  (or --mlir-sys-desc {path})")
    return 0


def _generated_sysdesc(target: str, how_to_get: str) -> int:
    """Without ``ttrt``: the descriptor tt-xla's PJRT plugin writes for its mock cluster
    (compile-only, no card), where the ``tt`` extra is installed."""
    import shutil

    from pytest_mlir_snippets.worker.targets.tt_pjrt import PluginError, generated_descriptor, plugin_library

    try:
        made = generated_descriptor(plugin_library())
    except PluginError as error:
        print(f"mlir-snippets sysdesc: `ttrt` is not on PATH ({how_to_get}), and {error}", file=sys.stderr)
        return 2
    Path(target).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(made, target)
    path = Path(target).resolve()
    print(f"wrote {path} (tt-xla's PJRT plugin, compile-only: one Blackhole P150, mocked)\n"
          f"use it: export SYSTEM_DESC_PATH={path}  (or --mlir-sys-desc {path})")
    return 0


def fetch_tt(args: argparse.Namespace) -> int:
    """tt-xla's PJRT plugin (the pinned ``libtt.so``) into the cache, where the ttnn target finds it."""
    from pytest_mlir_snippets.worker.targets.tt_pjrt import PluginError, plugin_library

    try:
        print(plugin_library())
    except PluginError as error:
        print(f"mlir-snippets fetch-tt: {error}", file=sys.stderr)
        return 2
    return 0


def inventory_command(args: argparse.Namespace) -> int:
    from pytest_mlir_snippets.tools import inventory

    if args.from_torch:
        if not args.out:
            print("mlir-snippets inventory: --from-torch needs --out DIR", file=sys.stderr)
            return 2
        from pytest_mlir_snippets.tools.torch_import import export, load_factory

        try:
            factory, source, _ = load_factory(args.from_torch)
            module = export(factory)[0]
        except (ValueError, ImportError, AttributeError) as error:
            print(f"mlir-snippets inventory: {error}", file=sys.stderr)
            return 2
        taken = inventory.take_inventory(str(module), f"{source} (torch-mlir, linalg-on-tensors)")
        written, problems = [inventory.write_inventory(taken, Path(args.out))], list[str]()
    else:
        if not args.models:
            print("mlir-snippets inventory: give MODEL.mlir files or --from-torch", file=sys.stderr)
            return 2
        written, problems = inventory.run([Path(m) for m in args.models], Path(args.out) if args.out else None)
    for path in written:
        print(f"wrote {path} and {path.with_name(inventory.REPORT_FILE).name}")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


def new_iteration_command(args: argparse.Namespace) -> int:
    from pytest_mlir_snippets.tools.new_iteration import NewIterationError, new_iteration, next_steps

    try:
        written = new_iteration(args.run_dir, args.source)
    except (NewIterationError, OSError) as error:
        print(f"mlir-snippets new-iteration: {error}", file=sys.stderr)
        return 2
    print("\n".join(next_steps(written)))
    return 0


def doctor_command(args: argparse.Namespace) -> int:
    from pytest_mlir_snippets.tools.doctor import doctor

    print("\n".join(doctor()))
    return 0


def export_lit_command(args: argparse.Namespace) -> int:
    from pytest_mlir_snippets.triage.export_lit import ExportError, export_lit

    try:
        text = export_lit(args.function, args.timeout)
    except ExportError as error:
        print(f"mlir-snippets export-lit: {error}", file=sys.stderr)
        return 2
    if args.out is None:
        sys.stdout.write(text)
        return 0
    Path(args.out).write_text(text)
    print(f"wrote {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mlir-snippets", description="tools around pytest-mlir-snippets")
    commands = parser.add_subparsers(dest="command", required=True)
    rebuild = commands.add_parser("report", help="rebuild run reports from --mlir-json files")
    rebuild.add_argument("json_files", nargs="+", metavar="JSON")
    rebuild.add_argument("--out", metavar="DIR", help="write the reports under DIR instead of beside the inputs")
    rebuild.add_argument("--json", metavar="PATH", help="also write the merged records")
    rebuild.add_argument("--update-expectations", metavar="FILE",
                         help="rewrite this expectations file from the records (a sharded run's new baseline)")
    rebuild.set_defaults(run=report)
    importer = commands.add_parser("import-torch", help="a PyTorch model as model_linalg.mlir, with its reference")
    importer.add_argument("target", metavar="MODULE:FACTORY",
                          help="FACTORY() returns (torch.nn.Module, example inputs); MODULE may be a .py path")
    importer.add_argument("outdir", type=Path, metavar="OUTDIR")
    importer.add_argument("--func-name", default="forward")
    importer.set_defaults(run=import_torch_command)
    query = commands.add_parser("sysdesc", help="write tt-mlir's system descriptor (runs ttrt query --save-artifacts)")
    query.set_defaults(run=sysdesc)
    fetch = commands.add_parser("fetch-tt", help="fetch tt-xla's PJRT plugin (pinned) into the cache for ttnn")
    fetch.set_defaults(run=fetch_tt)
    ops = commands.add_parser("inventory", help="one function per unique op configuration of a model: ops.mlir")
    ops.add_argument("models", nargs="*", metavar="MODEL.mlir")
    ops.add_argument("--out", metavar="DIR", help="write <DIR>/<model stem>/ (default: beside each model)")
    ops.add_argument("--from-torch", metavar="MODULE:FACTORY", help="a PyTorch model, through torch-mlir")
    ops.set_defaults(run=inventory_command)
    step = commands.add_parser("new-iteration", help="start an optimization run's next iteration: vK/ with "
                               "transform.mlir, pass_pipeline.txt and hypothesis.txt")
    step.add_argument("run_dir", type=Path, metavar="RUN", help="the run's folder (or its model_linalg.mlir)")
    step.add_argument("--from", dest="source", metavar="vN",
                      help="copy transform.mlir and pass_pipeline.txt from vN (default: the last iteration; "
                           "none yet: the run's target's starting schedule)")
    step.set_defaults(run=new_iteration_command)
    check = commands.add_parser("doctor", help="where the installed MLIR, LLVM, torch-mlir and IREE tools are, "
                                "and which targets work here")
    check.set_defaults(run=doctor_command)
    lit = commands.add_parser("export-lit", help="one function as an upstream-style integration test (RUN and "
                              "CHECK lines over a driver module that compares it with its golden)")
    lit.add_argument("function", metavar="FILE::FUNC", help="FUNC as in the node id")
    lit.add_argument("--out", metavar="PATH", help="write the test here (default: standard output)")
    lit.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                     help=f"for the compile and run of FUNC, as an item's --mlir-timeout (default {DEFAULT_TIMEOUT:g})")
    lit.set_defaults(run=export_lit_command)
    reduce.add_parser(commands)
    from pytest_mlir_snippets.tools import onnx_tests, record_goldens

    onnx_tests.add_parser(commands)
    record_goldens.add_parser(commands)
    args, rest = parser.parse_known_args(argv)
    if rest and not getattr(args, "takes_rest", False):
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    try:
        result: int = args.run(args, rest) if getattr(args, "takes_rest", False) else args.run(args)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (``| head -1``): what is left unread goes nowhere
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE  # as a process killed by SIGPIPE (the shells' 141)
    return result


if __name__ == "__main__":
    sys.exit(main())
