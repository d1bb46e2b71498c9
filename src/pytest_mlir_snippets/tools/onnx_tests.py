"""``mlir-snippets onnx-tests``: ONNX's node suite on a target.

    mlir-snippets onnx-tests [--target T] [-k PATTERN] [--all] [PYTEST ARGS...]
    mlir-snippets onnx-tests --write DIR [-k PATTERN] [--all]

The first runs ONNX's own harness under pytest (``onnx_backend/node_tests.py``; pytest's
arguments pass through: ``-n 2``, ``--junitxml``...); the second writes the cases as
snippet folders with their recorded data, which ``pytest DIR`` runs. ``-k``: a regular
expression searched in the case names; ``--all``: the cases no compiler can match too.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path


def onnx_tests_command(args: argparse.Namespace, pytest_args: list[str]) -> int:
    try:
        import onnx  # noqa: F401
    except ImportError:
        print("mlir-snippets onnx-tests: onnx is not installed; install pytest-mlir-snippets[onnx]", file=sys.stderr)
        return 2
    if args.write:
        from pytest_mlir_snippets.onnx_backend.write import SUMMARY, write_cases

        summary = write_cases(Path(args.write), args.k, args.all)
        print(f"wrote {len(summary['written'])} case(s) under {args.write}; {len(summary['not_written'])} not "
              f"written (see {SUMMARY}), {len(summary['unmatchable'])} left out as unmatchable")
        return 0
    # node_tests's path, not the module: importing it builds ONNX's whole suite, which the pytest run does
    from pytest_mlir_snippets import onnx_backend
    from pytest_mlir_snippets.onnx_backend import ALL_VARIABLE, INCLUDE_VARIABLE, TARGET_VARIABLE

    env = {**os.environ, TARGET_VARIABLE: args.target, ALL_VARIABLE: "1" if args.all else "0"}
    if args.k:
        env[INCLUDE_VARIABLE] = args.k
    suite = Path(onnx_backend.__file__).with_name("node_tests.py")
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(suite), *pytest_args]
    return subprocess.run(command, env=env, check=False).returncode


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = commands.add_parser("onnx-tests", help="ONNX's node test suite on a target (its own harness, under "
                                 "pytest), or --write DIR: the cases as snippet folders with recorded data")
    parser.add_argument("--target", default="cpu", help="the plugin's target (default cpu)")
    parser.add_argument("-k", metavar="PATTERN", help="a regular expression searched in the case names")
    parser.add_argument("--all", action="store_true", help="also the cases no compiler can match (random outputs, "
                        "string tensors, ImageDecoder)")
    parser.add_argument("--write", metavar="DIR", help="write the cases as snippet folders under DIR instead")
    parser.set_defaults(run=onnx_tests_command, takes_rest=True)
