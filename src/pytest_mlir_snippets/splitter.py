"""Split an MLIR snippet file into one standalone module per public function.

This is a lexical scan, not a parser: it understands MLIR's strings, comments,
brackets, regions, symbol references, aliases and resource blocks, which is all
that collection needs, and it works for dialects nobody registered (TTIR, TTNN).
``tests/test_splitter.py`` checks it against the MLIR parser on every corpus file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Structural tokens only: words are read on demand, which keeps the scan fast.
_TOKEN = re.compile(
    r'(?P<nl>\n)|(?P<comment>//[^\n]*)|(?P<str>"(?:[^"\\\n]|\\.)*")'
    r"|(?P<ropen>\{-#)|(?P<rclose>#-\})|(?P<skip>->|>=|<=)"
    r'|(?P<open>[(\[{<])|(?P<close>[)\]}>])|(?P<sym>@(?:"(?:[^"\\\n]|\\.)*"|[\w$.\-]+))'
)
_WORD = re.compile(r'"[^"\n]*"|[\w$.\-#!]+')
_PAIRS = {")": "(", "]": "[", "}": "{", ">": "<"}
_CONTINUES_AFTER = (",", "->", ":", "=", "(", "attributes", "[", "{")
_CONTINUES_BEFORE = ("->", ":", "attributes", "{", ")", "]", "=", ",")
_MODULE_OPS = ("module", "builtin.module")
_VISIBILITY = ("public", "private", "nested")
_SYM_NAME = re.compile(r'sym_name\s*=\s*"((?:[^"\\]|\\.)*)"')
_SYM_VIS = re.compile(r'sym_visibility\s*=\s*"(\w+)"')
_SPACE = re.compile(r"[ \t\r\n]+")
_VALUE_DEF = re.compile(r"[\w%#,:\s]*=\s*")
_BLANKS_AND_COMMENTS = re.compile(r"\s*(?://[^\n]*\n\s*)*")
_RESOURCE_ENTRY = re.compile(r'^\s*([\w$.\-]+|"[^"]*")\s*:\s*"0x')
_RESOURCE_USE = re.compile(r'dense_resource<([\w$.\-]+|"[^"]*")>')


class SplitError(ValueError):
    """The text is not structured as MLIR (unbalanced brackets, stray text)."""


_ESCAPE = re.compile(r"\\([0-9a-fA-F]{2}|.)")
_ESCAPED = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


def unescape(text: str) -> str:
    """The value of an MLIR string literal's body: ``\\n``, ``\\"``, ``\\\\`` and ``\\XX`` hex."""
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)) if len(m.group(1)) == 2 else
                       _ESCAPED.get(m.group(1), m.group(1)), text)


def symbol_name(token: str) -> str:
    """``@foo`` -> ``foo``; ``@"a.b"`` -> ``a.b``."""
    name = token[1:] if token.startswith("@") else token
    if name.startswith('"') and name.endswith('"') and len(name) >= 2:
        name = unescape(name[1:-1])
    return name


@dataclass
class Op:
    """One operation found directly in a module body (or the file's top level)."""

    name: str
    start: int
    end: int
    line: int
    column: int
    symbol: str | None = None
    visibility: str = "public"
    has_body: bool = False
    header_end: int = 0  # offset of the region's "{" (or end) : the part before it
    region: tuple[int, int] | None = None  # offsets inside the braces
    refs: set[str] = field(default_factory=set)
    children: list[Op] = field(default_factory=list)
    parent: Op | None = None
    comments: list[str] = field(default_factory=list)  # comment lines right above

    @property
    def is_module(self) -> bool:
        return self.name in _MODULE_OPS

    @property
    def is_function(self) -> bool:
        return self.name in ("func.func", '"func.func"')


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


class SnippetSource:
    """The scanned structure of one snippet file."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.aliases: list[Op] = []
        self.resources: tuple[int, int] | None = None
        self.top = Op("<file>", 0, len(text), 1, 1, has_body=True, region=(0, len(text)))
        self.top.children = self._scan_body(0, len(text), self.top, top_level=True)
        self.functions = self._find_functions()

    # ---------------------------------------------------------------- scanning
    def line_of(self, offset: int) -> int:
        lo, hi = 0, len(self._line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    def _scan_body(self, begin: int, end: int, parent: Op, top_level: bool = False) -> list[Op]:
        text = self.text
        ops: list[Op] = []
        comments: list[str] = []
        pos = begin
        while pos < end:
            # skip blank space and collect comment lines above the next op
            m = _SPACE.match(text, pos, end)
            if m:
                pos = m.end()
                continue
            if text.startswith("//", pos):
                eol = text.find("\n", pos, end)
                eol = end if eol < 0 else eol
                comments.append(text[pos:eol])
                pos = eol
                continue
            if text.startswith("{-#", pos):
                close = text.find("#-}", pos, end)
                if close < 0:
                    raise SplitError(f"line {self.line_of(pos)}: '{{-#' without '#-}}'")
                if top_level:
                    self.resources = (pos, close + 3)
                pos = close + 3
                comments = []
                continue
            op = self._scan_op(pos, end, parent)
            op.comments = comments
            comments = []
            if op.name.startswith(("#", "!")) and top_level:
                self.aliases.append(op)
            else:
                ops.append(op)
            pos = op.end
        return ops

    def _scan_op(self, start: int, end: int, parent: Op) -> Op:
        text = self.text
        word = _WORD.match(text, start, end)
        if not word:
            raise SplitError(f"line {self.line_of(start)}: unexpected text {text[start:start + 20]!r}")
        name = word.group(0)
        if name.startswith("%"):  # "%0 = op ..." at module level: name the op, not the value
            after = _VALUE_DEF.match(text, word.end(), end)
            nxt = _WORD.match(text, after.end(), end) if after else None
            name = nxt.group(0) if nxt else name
        line = self.line_of(start)
        op = Op(name, start, end, line, start - self._line_starts[line - 1] + 1, parent=parent)
        generic = name.startswith('"')
        stack: list[str] = []
        line_begin = start
        comment_at = -1
        region_open = -1
        region_depth = 0
        for m in _TOKEN.finditer(text, word.end(), end):
            kind = m.lastgroup
            tok = m.group(0)
            if kind == "nl":
                if not stack and self._op_ends(start, line_begin, comment_at, m.start(), end):
                    op.end = m.start()
                    break
                line_begin, comment_at = m.end(), -1
            elif kind == "comment":
                comment_at = m.start()
            elif kind == "sym":
                op.refs.add(symbol_name(tok))
                if op.symbol is None and not generic and region_open < 0:
                    op.symbol = symbol_name(tok)
            elif kind == "open":
                if tok == "{" and region_open < 0 and self._is_region_brace(stack, generic, start, m.start()):
                    region_open = m.start()
                    op.header_end = m.start()
                    region_depth = len(stack)
                stack.append(tok)
            elif kind == "close":
                want = _PAIRS[tok]
                if tok == ">" and (not stack or stack[-1] != "<"):
                    continue  # a stray '>' (e.g. in an affine constraint) is not a bracket
                while stack and stack[-1] != want and stack[-1] == "<":
                    stack.pop()
                if not stack or stack[-1] != want:
                    raise SplitError(f"line {self.line_of(m.start())}: unbalanced '{tok}'")
                stack.pop()
                if tok == "}" and region_open >= 0 and op.region is None and len(stack) == region_depth:
                    op.region = (region_open + 1, m.start())
            elif kind == "ropen" or kind == "rclose":
                op.end = m.start()
                break
        else:
            if stack:
                raise SplitError(f"line {line}: '{stack[-1]}' is never closed")
        op.end = op.end if op.end < end else end
        self._describe(op, generic)
        return op

    def _op_ends(self, start: int, line_begin: int, comment_at: int, nl: int, end: int) -> bool:
        """At a newline with balanced brackets: does the op end here?"""
        text = self.text
        last = text[line_begin: comment_at if comment_at >= 0 else nl].rstrip()
        if not last:
            return False if line_begin == start else True
        if last.endswith(_CONTINUES_AFTER):
            return False
        nxt = _BLANKS_AND_COMMENTS.match(text, nl, end)
        rest = text[nxt.end() if nxt else nl: end]
        return not rest.startswith(_CONTINUES_BEFORE)

    def _is_region_brace(self, stack: list[str], generic: bool, start: int, at: int) -> bool:
        before = self.text[start:at].rstrip()
        if generic:
            return stack == ["("] and before.endswith("(")
        return not stack and not before.endswith(("attributes", "<", "="))

    def _describe(self, op: Op, generic: bool) -> None:
        text = self.text
        header = text[op.start: op.header_end if op.header_end else op.end]
        if generic:
            props = _SYM_NAME.search(header)
            op.symbol = unescape(props.group(1)) if props else None
            vis = _SYM_VIS.search(header)
            op.visibility = vis.group(1) if vis else "public"
            body = text[op.region[0]: op.region[1]] if op.region else ""
            op.has_body = bool(body.strip())
        else:
            words = header.split()
            op.visibility = words[1] if len(words) > 1 and words[1] in _VISIBILITY else "public"
            op.has_body = op.region is not None
        if op.symbol is not None:
            op.refs.discard(op.symbol)
        if op.region is not None and not op.is_function:
            try:
                kids = self._scan_body(op.region[0], op.region[1], op)
            except SplitError:
                if op.is_module:
                    raise
                kids = []  # an attribute dictionary or a region of custom syntax
            if op.is_module or any(k.is_module or k.is_function for k in kids):
                op.children = kids

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
        siblings = (fn.scope[-1] if fn.scope else self.top).children
        by_symbol = {op.symbol: op for op in siblings if op.symbol is not None}
        keep: set[int] = {id(fn.op)}
        todo = [fn.op]
        while todo:
            for ref in todo.pop().refs:
                dep = by_symbol.get(ref)
                if dep is not None and id(dep) not in keep:
                    keep.add(id(dep))
                    todo.append(dep)
        out: list[str] = []
        line_map: list[tuple[int, int, int]] = []

        def emit(chunk: str, orig_line: int | None) -> None:
            split_line = sum(s.count("\n") for s in out) + 1
            if orig_line is not None:
                line_map.append((split_line, orig_line, chunk.count("\n") + 1))
            out.append(chunk + "\n")

        for alias in self.aliases:
            emit(self._op_text(alias), alias.line)
        modules = [op for op in fn.scope if op.is_module]
        header, header_line = "module", None
        if modules:
            inner = modules[-1]
            header = self.text[inner.start: inner.header_end].strip()
            header_line = inner.line
            header = _merge_module_attributes(self, modules, header)
        emit(header + " {", header_line)
        for op in siblings:
            if id(op) in keep:
                emit(self._op_text(op), op.line)
        emit("}", None)
        if self.resources is not None:
            emit(self._filtered_resources("".join(out)), self.line_of(self.resources[0]))
        return Split("".join(out), line_map)

    def _op_text(self, op: Op) -> str:
        line_start = self._line_starts[op.line - 1]
        prefix = self.text[line_start: op.start]
        if prefix.strip():
            prefix = " " * len(prefix)
        return prefix + self.text[op.start: op.end].rstrip()

    def _filtered_resources(self, module_text: str) -> str:
        """The ``{-# ... #-}`` trailer, keeping only blobs the module refers to."""
        assert self.resources is not None
        block = self.text[self.resources[0]: self.resources[1]]
        used = set(_RESOURCE_USE.findall(module_text))
        lines = block.split("\n")
        kept: list[str] = []
        for line in lines:
            m = _RESOURCE_ENTRY.match(line)
            if m and m.group(1) not in used:
                continue
            kept.append(line)
        return "\n".join(kept).replace(",\n    }", "\n    }")


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
    part); same name in one module (invalid MLIR, reported later): ``~N``."""
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
    first: dict[str, Function] = {}
    for fn in functions:
        if fn.uid in first:
            n = 2
            while f"{fn.uid}~{n}" in first:
                n += 1
            fn.duplicate_of = first[fn.uid].line
            first[f"{fn.uid}~{n}"] = fn
            fn.uid = f"{fn.uid}~{n}"
        else:
            first[fn.uid] = fn


def _scope_label(op: Op) -> str:
    if op.symbol:
        return op.symbol
    siblings = op.parent.children if op.parent else []
    same = [s for s in siblings if s.name == op.name]
    index = next((i for i, s in enumerate(same) if s is op), 0)
    return f"{op.name.split('.')[-1]}{index}"
