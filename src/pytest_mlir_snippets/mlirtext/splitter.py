"""Split an MLIR snippet file into one standalone module per public function.

Builds on ``scanner.Scan``: finds the public ``func.func`` definitions (nested
modules included), gives each a unique id, and writes a module with everything
the function needs: aliases, resource blobs it uses, enclosing module
attributes, and the private declarations, callees and globals it refers to.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pytest_mlir_snippets.mlirtext.scanner import Op, Scan
from pytest_mlir_snippets.mlirtext.symbols import SplitError, symbol_name, unescape

__all__ = ["Function", "SnippetSource", "Split", "SplitError", "symbol_name", "unescape"]

_RESOURCE_ENTRY = re.compile(r'^\s*([\w$.\-]+|"[^"]*")\s*:\s*"0x')
_RESOURCE_USE = re.compile(r'dense_resource<([\w$.\-]+|"[^"]*")>')


@dataclass
class Function:
    """A public function definition: one test subject."""

    name: str  # the symbol name
    uid: str  # unique within the file; what the node id shows
    line: int  # 1-based line of the func.func op
    op: Op
    scope: list[Op]  # enclosing ops, outermost first
    comments: list[str]
    duplicate_of: int | None = None  # line of the first definition with this uid


@dataclass
class Split:
    """A standalone module for one function, and where its lines came from."""

    text: str
    # (first line in ``text``, first line in the file, number of lines), 1-based
    line_map: list[tuple[int, int, int]]

    def original_line(self, line: int) -> int | None:
        for split_start, orig_start, count in self.line_map:
            if split_start <= line < split_start + count:
                return orig_start + line - split_start
        return None

class SnippetSource(Scan):
    """The scanned structure of one snippet file, and its functions."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.functions = self._find_functions()
        self._symbols: dict[tuple[int, int], dict[str, Op]] = {}  # (module body id, section) -> ops by symbol

    def _find_functions(self) -> list[Function]:
        found: list[Function] = []

        def walk(ops: list[Op], scope: list[Op]) -> None:
            for op in ops:
                if op.is_function and op.has_body and op.visibility == "public" and op.symbol is not None:
                    found.append(Function(op.symbol, op.symbol, op.line, op, scope, op.comments))
                elif op.children:
                    walk(op.children, [*scope, op])

        walk(self.top.children, [])
        _assign_uids(found)
        return found

    # --------------------------------------------------------------- splitting
    def split(self, fn: Function) -> Split:
        """A module holding ``fn`` and everything it needs, parseable on its own."""
        parent = fn.scope[-1] if fn.scope else self.top
        section = fn.op.section
        by_symbol = self._symbols.get((id(parent), section))
        if by_symbol is None:  # once per module body: a split costs its own size, not the file's
            by_symbol = self._symbols[(id(parent), section)] = {
                op.symbol: op for op in parent.children if op.symbol is not None and op.section == section}
        keep: dict[int, Op] = {id(fn.op): fn.op}
        todo = [fn.op]
        while todo:
            for ref in todo.pop().refs:
                dep = by_symbol.get(ref)
                if dep is not None and id(dep) not in keep:
                    keep[id(dep)] = dep
                    todo.append(dep)
        out: list[str] = []
        line_map: list[tuple[int, int, int]] = []

        def emit(chunk: str, orig_line: int | None) -> None:
            split_line = sum(s.count("\n") for s in out) + 1
            if orig_line is not None:
                line_map.append((split_line, orig_line, chunk.count("\n") + 1))
            out.append(chunk + "\n")

        for alias in self.aliases:
            if alias.section == section:
                emit(self._op_text(alias), alias.line)
        modules = [op for op in fn.scope if op.is_module]
        header, header_line = "module", None
        if modules:
            inner = modules[-1]
            header = self.text[inner.start: inner.header_end].strip()
            header_line = inner.line
            header = _merge_module_attributes(self, modules, header)
        emit(header + " {", header_line)
        for op in sorted(keep.values(), key=lambda op: op.start):  # in file order
            emit(self._op_text(op), op.line)
        emit("}", None)
        resources = self.resources.get(section)
        if resources is not None:
            emit(self._filtered_resources("".join(out), resources), self.line_of(resources[0]))
        return Split("".join(out), line_map)

    def _op_text(self, op: Op) -> str:
        line_start = self._line_starts[op.line - 1]
        prefix = self.text[line_start: op.start]
        if prefix.strip():
            prefix = " " * len(prefix)
        return prefix + self.text[op.start: op.end].rstrip()

    def _filtered_resources(self, module_text: str, resources: tuple[int, int]) -> str:
        """The ``{-# ... #-}`` trailer, keeping only blobs the module refers to."""
        block = self.text[resources[0]: resources[1]]
        used = set(_RESOURCE_USE.findall(module_text))
        kept: list[str] = []
        for line in block.split("\n"):
            m = _RESOURCE_ENTRY.match(line)
            if m and m.group(1) not in used:
                continue
            if line.lstrip().startswith("}") and kept and kept[-1].endswith(","):
                kept[-1] = kept[-1][:-1]  # the entry before a dropped last one
            kept.append(line)
        return "\n".join(kept)


def _merge_module_attributes(src: SnippetSource, modules: list[Op], header: str) -> str:
    """Carry attributes of outer builtin modules into the innermost one's header."""
    entries: dict[str, str] = {}
    for mod in modules:
        text = src.text[mod.start: mod.header_end]
        at = text.find("attributes")
        if at < 0:
            continue
        brace = text.find("{", at)
        close = text.rfind("}")
        for entry in _dict_entries(text[brace + 1: close]):
            key = entry.split("=", 1)[0].strip()
            entries[key] = entry
    if not entries:
        return header
    at = header.find("attributes")
    base = header[:at].rstrip() if at >= 0 else header
    return f"{base} attributes {{{', '.join(entries.values())}}}"


def _dict_entries(body: str) -> list[str]:
    """Split an attribute dictionary's body at its top-level commas."""
    entries: list[str] = []
    depth, begin = 0, 0
    for m in re.finditer(r'"(?:[^"\\]|\\.)*"|->|[(\[{<]|[)\]}>]|,', body):
        tok = m.group(0)
        if tok in "([{<":
            depth += 1
        elif tok in ")]}>":
            depth -= 1
        elif tok == "," and depth == 0:
            entries.append(body[begin: m.start()].strip())
            begin = m.end()
    last = body[begin:].strip()
    if last:
        entries.append(last)
    return entries


def _assign_uids(functions: list[Function]) -> None:
    """Same name in two nested modules: prefix the module path (from where the paths
    part); the k-th ``// -----`` section defining a name (k >= 2): ``~k``; same name in
    one module (invalid MLIR, reported later): ``~N``, the next number free."""
    sections: dict[int, list[Function]] = {}
    for fn in functions:
        sections.setdefault(fn.op.section, []).append(fn)
    for in_section in sections.values():
        _module_paths(in_section)
    defining: dict[str, list[int]] = {}  # uid -> the sections defining it, in file order
    for fn in functions:
        order = defining.setdefault(fn.uid, [])
        if fn.op.section not in order:
            order.append(fn.op.section)
    for fn in functions:
        k = defining[fn.uid].index(fn.op.section) + 1
        fn.uid = fn.uid if k == 1 else f"{fn.uid}~{k}"
    taken = {fn.uid for fn in functions}
    first: dict[str, Function] = {}
    for fn in functions:
        if fn.uid in first:
            n = 2
            while f"{fn.uid}~{n}" in taken:
                n += 1
            fn.duplicate_of = first[fn.uid].line
            taken.add(f"{fn.uid}~{n}")
            fn.uid = f"{fn.uid}~{n}"
        else:
            first[fn.uid] = fn


def _module_paths(functions: list[Function]) -> None:
    """Functions of one name in different nested modules: the module path, from where the
    paths part, before the name."""
    groups: dict[str, list[Function]] = {}
    for fn in functions:
        groups.setdefault(fn.name, []).append(fn)
    for group in groups.values():
        if len(group) < 2:
            continue
        paths = [[_scope_label(op) for op in fn.scope] for fn in group]
        common = 0
        while all(len(p) > common for p in paths) and len({p[common] for p in paths}) == 1:
            common += 1
        for fn, path in zip(group, paths):
            fn.uid = ".".join([*path[common:], fn.name])


def _scope_label(op: Op) -> str:
    if op.symbol:
        return op.symbol
    siblings = op.parent.children if op.parent else []
    same = [s for s in siblings if s.name == op.name]
    index = next((i for i, s in enumerate(same) if s is op), 0)
    return f"{op.name.split('.')[-1]}{index}"
