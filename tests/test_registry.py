"""The target registry (``registry.py``) is the one list of targets: what reads it, and
that the backends and the dialect table agree with it."""

from __future__ import annotations

import ast
import importlib
import re
from dataclasses import fields
from pathlib import Path

import pytest

from pytest_mlir_snippets import registry, settings
from pytest_mlir_snippets.items import litcommand
from pytest_mlir_snippets.model import layout
from pytest_mlir_snippets.worker import dialects
from pytest_mlir_snippets.worker.targets import TARGETS as BACKENDS

PYPROJECT = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text()


def test_the_cli_and_the_worker_read_the_registry() -> None:
    target = next(o for o in settings.OPTIONS if o.flag == "--mlir-target")
    assert target.choices == registry.NAMES
    assert set(BACKENDS) == set(registry.NAMES)
    assert litcommand.TARGETS == {*registry.NAMES, "*"}
    assert layout.STAGES == {"cpu": registry.CPU_RUN, "cuda": registry.CUDA_RUN}
    assert set(dialects.TAKES) == set(registry.NAMES)


@pytest.mark.parametrize("name", registry.NAMES)
def test_each_backend_is_the_target_it_is_registered_as(name: str) -> None:
    target = registry.TARGETS[name]
    module, cls = target.backend.split(":")
    backend = getattr(importlib.import_module(f"pytest_mlir_snippets.worker.{module}"), cls)
    assert backend.name == name
    if target.extra:
        assert re.search(rf"^{re.escape(target.extra)} = \[", PYPROJECT, re.MULTILINE), target.extra


def test_a_package_whose_parent_is_missing_is_absent_not_an_error() -> None:
    """find_spec raises for ``iree.compiler`` where no ``iree`` is installed: the cpu target's
    choice of a second compiler and IREE's own "not installed" message must not."""
    from pytest_mlir_snippets.registry import Target

    target = Target("x", "x:X", packages=("no_such_package_here.sub", "json"))
    assert target.absent() == ["no_such_package_here.sub"]


SRC = Path(__file__).resolve().parent.parent / "src" / "pytest_mlir_snippets"
# where a target's name may decide something: the registry, and the targets' own modules
OWN = (SRC / "registry.py", SRC / "worker" / "targets")


def _names_in(node: ast.AST) -> list[str]:
    """The target names a constant, or a tuple, list or set of constants, spells."""
    items = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    return [i.value for i in items if isinstance(i, ast.Constant) and i.value in registry.NAMES]


def _affixes(node: ast.AST) -> list[str]:
    """The strings a ``startswith`` or ``endswith`` asks about, longer than one letter."""
    items = node.elts if isinstance(node, ast.Tuple) else [node]
    return [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str) and len(i.value) > 1]


def target_name_branches(tree: ast.AST) -> list[tuple[int, str]]:
    """Where ``tree`` decides by a target's name: a comparison with one (``target == "cpu"``,
    ``in ("ttnn", "ttmetal")``), a table keyed by them, a tuple of several, ``startswith``
    or ``endswith`` with a part of one, a ``case "cpu":``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            found += [(node.lineno, f"compared with {n!r}") for part in (node.left, *node.comparators)
                      for n in _names_in(part)]
        elif isinstance(node, ast.Dict):
            found += [(node.lineno, f"a table keyed by {n!r}") for key in node.keys if key is not None
                      for n in _names_in(key)]
        elif isinstance(node, ast.Tuple | ast.List | ast.Set) and len(_names_in(node)) > 1:
            found.append((node.lineno, f"a collection of targets {_names_in(node)}"))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("startswith", "endswith") and node.args):
            fits = str.startswith if node.func.attr == "startswith" else str.endswith
            found += [(node.lineno, f"{node.func.attr}({a!r}), a part of {n!r}") for a in _affixes(node.args[0])
                      for n in registry.NAMES if fits(n, a)]
        elif isinstance(node, ast.MatchValue):
            found += [(node.lineno, f"case {n!r}") for n in _names_in(node.value)]
    return found


def test_no_branch_on_a_target_name_outside_the_registry_and_the_targets() -> None:
    """What a target does differently is a feature it declares (``registry.Target``) or its
    backend's (``worker/targets``), asked by code elsewhere: never its name."""
    found = [f"{path.relative_to(SRC)}:{line}: {what}" for path in sorted(SRC.rglob("*.py"))
             if not any(path == own or own in path.parents for own in OWN)
             for line, what in target_name_branches(ast.parse(path.read_text()))]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("code", [
    'if target == "iree-cpu": pass', 'if raw["target"] in ("ttnn", "ttmetal"): pass', 'x = target != "cpu"',
    'T = {"iree-cpu": "llvm-cpu"}', 'P = ("cpu", "cuda")', 'if name.endswith("cuda"): pass',
    'if name.startswith(("tt", "x")): pass', 'match target:\n    case "cpu": pass'])
def test_the_check_finds_each_way_of_branching_on_a_name(code: str) -> None:
    assert target_name_branches(ast.parse(code))


@pytest.mark.parametrize("code", ['Options(target="cpu")', 'os.environ.get(VAR, "cpu")', 'if kind == "stablehlo": pass',
                                  'if worker.startswith("gw"): pass', 'T = {"llvm-cpu": 1}'])
def test_the_check_lets_a_name_be_used(code: str) -> None:
    assert not target_name_branches(ast.parse(code))


@pytest.mark.parametrize("name", registry.NAMES)
def test_what_a_target_declares_names_what_there_is(name: str) -> None:
    from pytest_mlir_snippets.tools.new_iteration import STARTERS
    from pytest_mlir_snippets.worker.judging.goldens import SOURCES
    from pytest_mlir_snippets.worker.targets import load

    target = registry.TARGETS[name]
    assert target.dialects
    assert set(target.golden_references) <= set(SOURCES)
    assert set(target.option_checks) <= set(settings.OPTION_CHECKS) & {f.name for f in fields(settings.Settings)}
    assert (target.run_starter in STARTERS) == bool(target.run_stages)
    for hook in (target.reproducer, target.bisection, target.availability):
        assert not hook or callable(load(hook))
