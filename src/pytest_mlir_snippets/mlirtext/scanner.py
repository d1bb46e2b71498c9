"""Lexical scan of MLIR text into the ops of each module body.

Not a parser: it understands MLIR's strings, comments, brackets, regions,
symbol references, aliases and resource blocks, which is all that collection
needs, and it works for dialects nobody registered (TTIR, TTNN).
``tests/test_splitter.py`` checks the result against the MLIR parser.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from pytest_mlir_snippets.mlirtext.sections import sections, splits_input
from pytest_mlir_snippets.mlirtext.symbols import SplitError, symbol_name, unescape

# Structural tokens only: words are read on demand, and a bracket-free <...> (a type) is
# one token with no effect, which keeps the scan fast.
_TOKEN = re.compile(
    r'(?P<nl>\n)|(?P<comment>//[^\n]*)|(?P<str>"[^"\\\n]*(?:\\.[^"\\\n]*)*")'
    r"|(?P<ropen>\{-#)|(?P<rclose>#-\})|(?P<skip>->|>=|<=|<[^<>{}()\[\]\"@\n]*>)"
    r'|(?P<open>[(\[{<])|(?P<close>[)\]}>])|(?P<sym>@(?:"[^"\\\n]*(?:\\.[^"\\\n]*)*"|[\w$.\-]+))'
)  # strings as "unrolled loops": no per-character backtracking state on megabyte blobs
# Inside a function body only braces (and what may hide one), and symbol uses, matter:
# types there add no tokens, which makes the body scan several times faster.
_BODY = re.compile(
    r'(?P<comment>//[^\n]*)|(?P<str>"[^"\\\n]*(?:\\.[^"\\\n]*)*")|(?P<open>\{)|(?P<close>\})'
    r'|(?P<sym>@(?:"[^"\\\n]*(?:\\.[^"\\\n]*)*"|[\w$.\-]+))'
)
_STRING = re.compile(r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"')
_COMMENT_BRACE = re.compile(r"//[^\n]*[{}]")
_SYMBOL = re.compile(r'@(?:"[^"\\\n]*(?:\\.[^"\\\n]*)*"|[\w$.\-]+)')
_WORD = re.compile(r'"[^"\n]*"|[\w$.\-#!]+')
_PAIRS = {")": "(", "]": "[", "}": "{", ">": "<"}
_CONTINUES_AFTER = (",", "->", ":", "=", "(", "attributes", "[", "{")
_CONTINUES_BEFORE = ("->", ":", "attributes", "{", ")", "]", "=", ",")
_MODULE_OPS = ("module", "builtin.module")
_VISIBILITY = ("public", "private", "nested")
_SYM_NAME = re.compile(r'sym_name\s*=\s*"([^"\\]*(?:\\.[^"\\]*)*)"')
_SYM_VIS = re.compile(r'sym_visibility\s*=\s*"(\w+)"')
_SPACE = re.compile(r"[ \t\r\n]+")
_VALUE_DEF = re.compile(r"[\w%#,:\s]*=\s*")
_BLANKS_AND_COMMENTS = re.compile(r"\s*(?://[^\n]*\n\s*)*")
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
    section: int = 0  # the ``// -----`` section it is in (0 when the file is one module)

    @property
    def is_module(self) -> bool:
        return self.name in _MODULE_OPS

    @property
    def is_function(self) -> bool:
        return self.name in ("func.func", '"func.func"')


class Scan:
    """The ops of a snippet file: aliases, resource blocks, a tree of module bodies; under
    ``-split-input-file`` each section is a top level of its own (``Op.section``)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.aliases: list[Op] = []
        self.resources: dict[int, tuple[int, int]] = {}  # section -> its {-# ... #-} block
        self.top = Op("<file>", 0, len(text), 1, 1, has_body=True, region=(0, len(text)))
        self._section = 0
        for self._section, (begin, end) in enumerate(sections(text) if splits_input(text) else [(0, len(text))]):
            self.top.children += self._scan_body(begin, end, self.top, top_level=True)

    # ---------------------------------------------------------------- scanning
    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self._line_starts, offset)

    def _scan_body(self, begin: int, end: int, parent: Op, top_level: bool = False) -> list[Op]:
        text = self.text
        ops: list[Op] = []
        comments: list[str] = []
        pos = begin
        while pos < end:
            m = _SPACE.match(text, pos, end)  # blank space; comment lines above the next op are kept
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
                    self.resources[self._section] = (pos, close + 3)
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
        op = Op(name, start, end, line, start - self._line_starts[line - 1] + 1, parent=parent, section=self._section)
        generic = name.startswith('"')
        stack: list[str] = []
        line_begin = start
        comment_at = -1
        region_open = -1
        region_depth = 0
        pos = word.end()
        body_fast = op.is_function and not generic
        if body_fast:
            pos = self._plain_function(op, pos, end)
            if op.region is not None:
                region_open = op.header_end
        while True:
            m = _TOKEN.search(text, pos, end)
            if m is None:
                if stack:
                    raise SplitError(f"line {line}: '{stack[-1]}' is never closed")
                break
            pos = m.end()
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
                    if body_fast:  # a function's body: find its closing brace, and the symbols it uses
                        close = self._skip_body(m.end(), end, op)
                        op.region = (region_open + 1, close)
                        pos = close + 1
                        continue
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
        op.end = op.end if op.end < end else end
        self._describe(op, generic)
        return op

    def _plain_function(self, op: Op, pos: int, end: int) -> int:
        """The common ``func.func @name(args) -> results {`` header without strings,
        attributes or braces in types: its body found without reading the header token
        by token. Returns where the scan goes on (``pos`` when this is not such a header)."""
        text = self.text
        brace = text.find("{", pos, end)
        header = text[op.start:brace] if brace >= 0 else ""
        plain = (brace >= 0 and '"' not in header and "//" not in header and "attributes" not in header
                 and header.count("@") == 1 and header.count("(") == header.count(")")
                 and header.count("<") == header.count(">") - header.count("->"))
        if not plain:
            return pos
        symbol = _SYMBOL.search(header)
        op.symbol = symbol_name(symbol.group(0)) if symbol else None
        op.header_end = brace
        close = self._skip_body(brace + 1, end, op)
        op.region = (brace + 1, close)
        return close + 1

    def _skip_body(self, begin: int, end: int, op: Op) -> int:
        """The offset of the ``}`` closing a region that opened just before ``begin``.
        Brackets other than braces are MLIR's business (the parser reports them)."""
        text = self.text
        depth, pos = 1, begin
        while True:  # braces by str.find (fast); strings and comments checked after
            close = text.find("}", pos, end)
            if close < 0:
                raise SplitError(f"line {self.line_of(begin - 1)}: '{{' is never closed")
            opening = text.find("{", pos, close)
            if opening >= 0:
                depth, pos = depth + 1, opening + 1
                continue
            depth, pos = depth - 1, close + 1
            if depth == 0:
                break
        segment = text[begin:close]
        hidden = ('"' in segment and any("{" in m.group(0) or "}" in m.group(0) for m in _STRING.finditer(segment))
                  ) or ("//" in segment and _COMMENT_BRACE.search(segment) is not None)
        if hidden:  # a brace in a string or a comment: count with the tokenizer
            return self._skip_body_tokens(begin, end, op)
        if "@" in segment:
            op.refs.update(symbol_name(m.group(0)) for m in _SYMBOL.finditer(segment))
        return close

    def _skip_body_tokens(self, begin: int, end: int, op: Op) -> int:
        depth = 1
        for m in _BODY.finditer(self.text, begin, end):
            kind = m.lastgroup
            if kind == "open":
                depth += 1
            elif kind == "close":
                depth -= 1
                if depth == 0:
                    return m.start()
            elif kind == "sym":
                op.refs.add(symbol_name(m.group(0)))
        raise SplitError(f"line {self.line_of(begin - 1)}: '{{' is never closed")

    def _op_ends(self, start: int, line_begin: int, comment_at: int, nl: int, end: int) -> bool:
        """At a newline with balanced brackets: does the op end here?"""
        text = self.text
        last = text[line_begin: comment_at if comment_at >= 0 else nl].rstrip()
        if not last:
            return False if line_begin == start else True
        if last.endswith(_CONTINUES_AFTER):
            return False
        nxt = _BLANKS_AND_COMMENTS.match(text, nl, end)
        return not text.startswith(_CONTINUES_BEFORE, nxt.end() if nxt else nl, end)

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
