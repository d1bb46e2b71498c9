"""Structure rules of the package, checked on its source (fast: no MLIR, one subprocess).

- the sandbox worker loads no pytest and none of the pytest-side layers;
- no import cycle among the package's modules, nor among its packages, imports made for
  types only (``if TYPE_CHECKING:``) included (a triage package's modules are nodes of
  their own: ``TRIAGE``);
- the backends the worker loads by name (``worker/targets``) import no pytest either;
- no module over 300 lines;
- records, not ``user_properties``, feed the reports; nothing splits node ids;
- ``items/`` and ``reporting/`` do not import each other;
- ``reporting/`` imports no ``re``: it reads records' fields, not text the plugin wrote;
- request ops (``protocol.Op``) are spelled in the ``protocol`` package only;
- pytest-side modules opt out of assertion rewriting;
- docs/architecture.md names every folder of the package.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from pytest_mlir_snippets.protocol import Op, Stage

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = "pytest_mlir_snippets"
MAX_LINES = 300


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES: dict[str, Path] = {module_name(p): p for p in sorted((SRC / PACKAGE).rglob("*.py"))}


def imports_of(name: str) -> set[str]:
    """The package's modules that ``name`` imports, at module level, inside functions or
    for types only (``from a.b import c`` is module ``a.b.c`` when that is a module, else
    ``a.b``)."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == PACKAGE)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            if base.split(".")[0] != PACKAGE:
                continue
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in MODULES else base)
    found.discard(name)
    return {m for m in found if m in MODULES}


GRAPH: dict[str, set[str]] = {name: imports_of(name) for name in MODULES}


def test_the_graph_sees_the_package() -> None:
    assert len(MODULES) > 40
    assert "pytest_mlir_snippets.model.record" in GRAPH["pytest_mlir_snippets.items.base"]
    assert "pytest_mlir_snippets.golden.recorded" in GRAPH["pytest_mlir_snippets.items.snippet"]  # in a function
    assert "pytest_mlir_snippets.sandbox.cache" in GRAPH["pytest_mlir_snippets.session"]  # TYPE_CHECKING and not
    assert "pytest_mlir_snippets.model.record" in GRAPH["pytest_mlir_snippets.session"]  # TYPE_CHECKING only


def test_the_worker_loads_no_pytest_and_no_pytest_side_layer() -> None:
    code = ("import json, sys\nimport pytest_mlir_snippets.worker.loop\n"
            "print(json.dumps([pytest_mlir_snippets.__file__, sorted(sys.modules)]))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    origin, loaded = json.loads(done.stdout)
    assert Path(origin).is_relative_to(SRC)  # this checkout's package, not another install
    layers = tuple(f"{PACKAGE}.{layer}" for layer in ("items", "reporting", "sandbox", "settings", "session",
                                                       "plugin", "triage"))
    forbidden = [m for m in loaded if m in ("pytest", "_pytest") or m.startswith(("pytest.", "_pytest."))
                 or m in layers or m.startswith(tuple(f"{layer}." for layer in layers))]
    assert not forbidden, forbidden


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (a -> b -> ... -> a) per strongly connected component of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    cycles = []
    for component in components:
        start = min(component)
        path, seen = [start], {start}
        while True:  # walk inside the component until a module repeats
            nxt = min(w for w in graph[path[-1]] if w in component)
            if nxt in seen:
                cycles.append([*path[path.index(nxt):], nxt])
                break
            path.append(nxt)
            seen.add(nxt)
    return cycles


def test_find_cycles_finds_one() -> None:
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle() -> None:
    cycles = [" -> ".join(cycle) for cycle in find_cycles(GRAPH)]
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


# Triage runs at several heights: in the worker, failingpass marks the steps of every compile
# (below lowering) while the bisections and drivers run a target's backend (above the
# targets); on the pytest side, crashtriage runs under the device pool (sandbox/) while
# bisection reads the session. Their modules are nodes of their own in the package graph.
TRIAGE = ("triage", "worker.triage")


def package_of(name: str) -> str:
    """The node of ``name`` in the package graph: its package (a sub-subpackage such as
    ``worker.lowering.shlo`` folded into ``worker.lowering``); a module directly in a
    package that holds packages (the root, ``worker``) is a node of its own: such a
    package is a container of layers, not one layer. So is a triage package (TRIAGE): its
    modules hook in at several heights, each a node of its own."""
    parts = name.split(".")[1:]
    if not parts:
        return PACKAGE  # the package's own __init__: its public names
    is_package = MODULES[name].name == "__init__.py"
    folder = parts if is_package else parts[:-1]
    if len(folder) > 2:
        folder = folder[:2]
    holds_packages = any(m.startswith(".".join([PACKAGE, *folder, ""])) and len(m.split(".")) > len(folder) + 2
                         for m in MODULES) if folder else True
    if not is_package and ((len(folder) < 2 and holds_packages) or ".".join(folder) in TRIAGE):
        return ".".join(parts)
    return ".".join(folder)


def package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, imported in GRAPH.items():
        node = package_of(name)
        graph.setdefault(node, set()).update(package_of(m) for m in imported if package_of(m) != node)
    return graph


def test_the_package_graph_has_the_layers() -> None:
    assert package_of(f"{PACKAGE}.items.base") == "items"
    assert package_of(f"{PACKAGE}.worker.lowering.shlo.refine") == "worker.lowering"
    assert package_of(f"{PACKAGE}.worker.judging.judge") == "worker.judging"
    assert package_of(f"{PACKAGE}.worker.triage.failingpass") == "worker.triage.failingpass"
    assert package_of(f"{PACKAGE}.triage.bisection") == "triage.bisection"
    assert package_of(f"{PACKAGE}.session") == "session"
    assert package_of(f"{PACKAGE}.worker.targets") == "worker.targets"


def test_no_import_cycle_between_packages() -> None:
    cycles = [" -> ".join(cycle) for cycle in find_cycles(package_graph())]
    assert not cycles, "package cycles:\n" + "\n".join(cycles)


def test_the_backends_load_no_pytest() -> None:
    """Each backend module the worker imports by name (``TARGETS``), whether or not its
    target's packages are installed here."""
    code = ("import json, sys\nfrom pytest_mlir_snippets.worker.targets import TARGETS\nimport importlib\n"
            "for spec in TARGETS.values():\n"
            "    importlib.import_module('pytest_mlir_snippets.worker.' + spec.split(':')[0])\n"
            "print(json.dumps(sorted(sys.modules)))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                       env=env).stdout)
    assert f"{PACKAGE}.worker.targets.tt" in loaded and f"{PACKAGE}.worker.targets.iree" in loaded
    pytest_side = [m for m in loaded if m.split(".")[0] in ("pytest", "_pytest")]
    assert not pytest_side, pytest_side


def test_no_module_over_300_lines() -> None:
    over = {str(path.relative_to(SRC)): n for path in MODULES.values()
            if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert not over, f"modules over {MAX_LINES} lines: " + ", ".join(f"{p} ({n})" for p, n in sorted(over.items()))


def _reads_of_user_properties(tree: ast.AST) -> list[int]:
    """Lines that read ``.user_properties`` (a plain assignment to it is a write)."""
    written = {id(target) for node in ast.walk(tree) if isinstance(node, ast.Assign) for target in node.targets}
    lines = [node.lineno for node in ast.walk(tree)
             if isinstance(node, ast.Attribute) and node.attr == "user_properties" and id(node) not in written]
    lines += [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
              and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
              and any(isinstance(a, ast.Constant) and a.value == "user_properties" for a in node.args)]
    return sorted(lines)


def test_reports_never_read_user_properties() -> None:
    offenders = [f"{MODULES[name].relative_to(SRC)}:{line}" for name in MODULES
                 if name.startswith(f"{PACKAGE}.reporting")
                 for line in _reads_of_user_properties(ast.parse(MODULES[name].read_text()))]
    assert not offenders, "reporting/ reads user_properties (records are the source): " + ", ".join(offenders)


SPLITTERS = ("split", "rsplit", "partition", "rpartition")


def _node_id_splits(tree: ast.AST, worker: bool) -> list[int]:
    """Calls that take a node id apart: ``nodeid.split(...)``, ``x.nodeid.rpartition(...)``,
    and outside the worker (whose MLIR symbol references use ``::``) any ``.partition("::")``."""
    lines = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SPLITTERS):
            continue
        receiver = ast.unparse(node.func.value)
        on_separator = any(isinstance(a, ast.Constant) and a.value == "::" for a in node.args)
        if "nodeid" in receiver.lower() or (on_separator and not worker):
            lines.append(node.lineno)
    return lines


def test_nothing_splits_node_ids() -> None:
    offenders = [f"{path.relative_to(SRC)}:{line}" for name, path in MODULES.items()
                 for line in _node_id_splits(ast.parse(path.read_text()), name.startswith(f"{PACKAGE}.worker"))]
    assert not offenders, "node ids taken apart (use the item's and record's fields): " + ", ".join(offenders)


def test_the_source_checks_catch_what_they_look_for() -> None:
    assert _reads_of_user_properties(ast.parse("r.user_properties += x\ny = list(r.user_properties)\n"
                                               "r.user_properties = z\n")) == [1, 2]
    assert _node_id_splits(ast.parse("a = report.nodeid.split('::')\nb = name.partition('::')\n"
                                     "c = kernel.split('::')\n"), worker=False) == [1, 2, 3]
    assert _node_id_splits(ast.parse("c = str(kernel).split('::')[-1]\n"), worker=True) == []


def test_items_and_reporting_do_not_import_each_other() -> None:
    """Both stand on the shared model (``model/``: record, run layout, history, files)."""
    offenders = [f"{name} imports {module}" for name, imported in GRAPH.items() for module in sorted(imported)
                 for a, b in (("reporting", "items"), ("items", "reporting"))
                 if name.startswith(f"{PACKAGE}.{a}.") and module.startswith(f"{PACKAGE}.{b}.")]
    assert not offenders, offenders


def imported_modules(tree: ast.AST) -> set[str]:
    """Every module a source imports, by its full name (relative imports left out)."""
    found = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    return found | {node.module for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.module and not node.level}


def test_reporting_imports_no_re() -> None:
    """Reports read the records' fields (``subject_kind``, ``stage``, ``nodeid``, ...); a
    regular expression there would be reading back text the plugin wrote."""
    assert imported_modules(ast.parse("import re\nfrom re import sub\nfrom os import path\n")) >= {"re", "os"}
    offenders = [str(path.relative_to(SRC)) for name, path in MODULES.items()
                 if name.startswith(f"{PACKAGE}.reporting") and {"re", "regex"} & imported_modules(ast.parse(
                     path.read_text()))]
    assert not offenders, "reporting/ imports re: " + ", ".join(offenders)


def test_pytest_side_modules_opt_out_of_assertion_rewriting() -> None:
    """pytest rewrites the asserts of every module of a ``pytest11`` distribution, on every
    run where bytecode is not kept; the plugin's own modules have no test asserts to
    rewrite, so each says ``PYTEST_DONT_REWRITE`` (docs/speed.md). The worker's modules
    load in the sandbox, outside pytest."""
    missing = [name for name, path in MODULES.items() if not name.startswith(f"{PACKAGE}.worker")
               and "PYTEST_DONT_REWRITE" not in (ast.get_docstring(ast.parse(path.read_text())) or "")]
    assert not missing


# Words that are request ops and other things too: stages and call kinds (compile, execute,
# run), the scanner's tokens and a check's rule (open, close), info and attachment keys
# (reference, schedule), the run report's heading (iteration). Spelled as an op, they are
# found by where they stand; the other ops' values are found wherever they are spelled.
SHARED_WORDS = {s.value for s in Stage} | {"run", "open", "close", "reference", "schedule", "iteration"}


def _request_ops_spelled(tree: ast.AST) -> list[int]:
    """Lines that spell a request op as a string: an op's value as ``Request``'s op (or any
    ``op=``), compared with an ``op`` (``request.op == "compile"``, ``op in ("a", "b")``),
    given first to a function named ``*request``; an op's value not in SHARED_WORDS anywhere."""
    ops = {op.value for op in Op}

    def spelled(node: ast.AST | None) -> list[ast.Constant]:
        items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
        return [n for n in items if isinstance(n, ast.Constant) and n.value in ops]

    def named(node: ast.AST) -> str:
        return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""

    found = [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
             and n.value in ops and n.value not in SHARED_WORDS]
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            found += [c for k in node.keywords if k.arg == "op" for c in spelled(k.value)]
            if node.args and (named(node.func) == "Request" or named(node.func).lower().endswith("request")):
                found += spelled(node.args[0])
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(named(side) == "op" for side in sides):
                found += [c for side in sides for c in spelled(side)]
    return sorted({n.lineno for n in found})


def test_request_ops_are_spelled_in_the_protocol_only() -> None:
    """A request is ``Request(Op.X, ...)`` or a ``client.Client`` method; the worker answers
    it from its table (``worker.loop.HANDLERS``), so no op is a bare string elsewhere."""
    offenders = [f"{path.relative_to(SRC)}:{line}" for name, path in MODULES.items()
                 if name.split(".")[:2] != [PACKAGE, "protocol"]
                 for line in _request_ops_spelled(ast.parse(path.read_text()))]
    assert not offenders, "request ops spelled as strings (use protocol.Op): " + ", ".join(offenders)


def test_the_request_op_check_catches_what_it_looks_for() -> None:
    source = ('a = Request("compile", text)\nif request.op == "execute": pass\nb = op in ("run", "x")\n'
              'c = self._request("iteration")\nd = f(op="open")\ne = {"ping": 1}\ng = stage == "compile"\n'
              'h = info["reference"]\nk = Request(Op.COMPILE)\nm = ["pytorch-benchmark"]\n')
    assert _request_ops_spelled(ast.parse(source)) == [1, 2, 3, 4, 5, 6, 10]


def test_every_request_has_a_handler() -> None:
    """Each request type (a ``protocol.Request`` with its own op) has its handler, and every
    op is some request's."""
    from pytest_mlir_snippets.protocol import requests
    from pytest_mlir_snippets.worker.loop import HANDLERS

    kinds = {k for k in vars(requests).values() if isinstance(k, type) and issubclass(k, requests.Request)
             and "op" in vars(k)}
    assert set(HANDLERS) == kinds
    assert {k.op for k in kinds} == set(Op)
    assert requests.Compile("m", "f").op is Op.COMPILE


def folders_not_named(root: Path, text: str) -> list[str]:
    """The folders under ``root`` (``worker/lowering/onnx/``) that no line of ``text``'s
    layout block starts with, as ``  worker/lowering/onnx/  its job``."""
    folders = sorted(p.relative_to(root).as_posix() + "/" for p in root.rglob("*")
                     if p.is_dir() and not any(part.startswith(("__", ".")) for part in p.relative_to(root).parts))
    return [f for f in folders if not re.search(rf"^ +{re.escape(f)} +\S", text, re.M)]


def test_the_folder_check_catches_what_it_looks_for(tmp_path: Path) -> None:
    for folder in ("items", "worker/lowering/onnx", "worker/__pycache__"):
        (tmp_path / folder).mkdir(parents=True)
    text = "  items/   pytest items\n  worker/  the worker\n  see worker/lowering/ and worker/lowering/onnx/\n"
    assert folders_not_named(tmp_path, text) == ["worker/lowering/", "worker/lowering/onnx/"]


def test_every_package_folder_is_named_in_the_architecture() -> None:
    text = (SRC.parent / "docs" / "architecture.md").read_text()
    missing = folders_not_named(SRC / PACKAGE, text)
    assert not missing, "package folders docs/architecture.md does not name (with their job): " + ", ".join(missing)
