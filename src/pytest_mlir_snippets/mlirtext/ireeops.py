"""IREE's ``util`` and ``check`` ops, rewritten as text into MLIR's generic form.

IREE's ``tests/e2e`` build inputs with ``util.unfoldable_constant`` (and hide values
from the optimizer with ``util.optimization_barrier``) and judge results with the
``check`` dialect's ops. Their custom syntax parses only in IREE's own build, which
cannot share a process with upstream's bindings; in generic form they parse
anywhere that allows unregistered dialects, and the worker gives them their
meaning (``worker/lowering/ireeops.py``). The rewrite keeps every op on its lines
(line numbers of diagnostics and checks stay the file's).

Also here: which of a text's dialects exist only in IREE (``iree_only_dialects``).

PYTEST_DONT_REWRITE"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from pytest_mlir_snippets.mlirtext.scanner import _STRING  # the scanner's string literal

# an op at the start of a statement, with its results (``%0 = ``, ``%a, %b = ``)
_OP = re.compile(r"(?m)^(?P<indent>[ \t]*)(?P<results>(?:%[\w$.\-#:]+\s*,\s*)*%[\w$.\-#:]+\s*=\s*)?"
                 r"(?P<name>util\.unfoldable_constant|util\.optimization_barrier|check\.expect_\w+"
                 r"|flow\.tensor\.dynamic_constant|flow\.tensor\.tie_shape)\b")
_COMMENT = re.compile(r"//[^\n]*")
_TYPE_NEXT = re.compile(r"\s*:")  # an op's type on the line after its operands
_OPEN, _CLOSE = "([{<", ")]}>"
# dialects that only IREE's compiler has (``util`` is read here only for the two ops above)
IREE_ONLY = ("iree_linalg_ext", "iree_tensor_ext", "iree_encoding", "iree_codegen", "iree_gpu", "iree_cpu",
             "flow", "hal", "stream", "util", "check", "io_parameters", "iree_vector_ext")
_DIALECT_USE = re.compile(r"(?<![\w$.%#!@\"])(?:\"(?P<quoted>[a-z_][\w]*)\.[\w.]+\""
                          r"|(?P<plain>[a-z_][\w]*)\.[a-z_][\w.]*(?=[\s(<{]))")
_GENERIC_OP = re.compile(r'"([a-z_]\w*\.[\w.]+)"\s*\(')
_HANDLED = ("util.unfoldable_constant", "util.optimization_barrier", "check.expect_", "flow.tensor.dynamic_constant",
            "flow.tensor.tie_shape")  # the ops read here
_ATTRIBUTE_USE = re.compile(r"[#!](?P<dialect>[a-z_]\w*)\.")
CHECK_OPS = ("check.expect_eq", "check.expect_eq_const", "check.expect_almost_eq", "check.expect_almost_eq_const",
             "check.expect_true", "check.expect_false", "check.expect_all_true")


class IreeSyntaxError(ValueError):
    """A util or check op written in a form this rewrite does not know; ``dialect`` says
    whose op it is (IREE's, or the check dialect of StableHLO's interpreter)."""

    def __init__(self, message: str, dialect: str = "IREE") -> None:
        super().__init__(message)
        self.dialect = dialect


@dataclass(frozen=True)
class CheckSite:
    """A check op of the text, in order: its name and where it is."""

    name: str
    line: int
    column: int


def masked(text: str) -> str:
    """``text`` with the bodies of strings and comments blanked (same length and lines)."""
    def blank(m: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))

    return _COMMENT.sub(blank, _STRING.sub(lambda m: '"' + blank(m)[1:-1] + '"', text))


def uses_iree_ops(text: str) -> bool:
    return "util." in text or "check." in text or "flow.tensor." in text


def _walk(text: str, start: int = 0) -> Iterator[tuple[int, str, int]]:
    """Each character of ``text`` from ``start`` but the arrows ``->`` (no brackets), with
    the bracket depth once it is read."""
    depth, i = 0, start
    while i < len(text):
        if text.startswith("->", i):
            i += 2
            continue
        ch = text[i]
        depth += (ch in _OPEN) - (ch in _CLOSE)
        yield i, ch, depth
        i += 1


def _split_top(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside brackets."""
    parts, start = [], 0
    for i, ch, depth in _walk(text):
        if ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def _op_end(mask: str, start: int) -> int:
    """Where the op that starts its arguments at ``start`` ends: the end of the line on
    which its brackets close (a line ending in ``:`` or ``,``, or a next line starting
    with ``:``, goes on)."""
    for i, ch, depth in _walk(mask, start):
        if ch == "\n" and depth <= 0 and not mask[start:i].rstrip().endswith((":", ",")) \
                and not _TYPE_NEXT.match(mask, i):
            return i
    return len(mask)


def _matching(text: str, start: int) -> int:
    """The index just after the bracket closing the one at ``start``."""
    for i, ch, depth in _walk(text, start):
        if ch in _CLOSE and depth == 0:
            return i + 1
    raise IreeSyntaxError("unbalanced brackets")


def _generic(name: str, body: str) -> str:
    """The generic form of one op, from the text after its name."""
    if name == "util.unfoldable_constant":
        parts = _split_top(body, ":")
        if len(parts) < 2 or body.lstrip().startswith("{"):
            raise IreeSyntaxError(f"{name} {body.strip()!r}")
        kind = parts[-1]
        return f'"{name}"() {{value = {body.strip()}}} : () -> {kind}'
    if name == "flow.tensor.tie_shape":  # the value, its dynamic sizes told: the value itself here
        value, _, kind = body.partition(":")
        kind = kind.split("{", 1)[0].strip()
        return f'"tensor.cast"({value.strip()}) : ({kind}) -> {kind}'
    if name == "util.optimization_barrier":
        values, _, kinds = body.partition(":")
        types = ", ".join(_split_top(kinds, ","))
        return f'"{name}"({values.strip()}) : ({types}) -> ({types})'
    body = body.strip()
    if body.startswith("<"):
        raise IreeSyntaxError(f"{name} with a device operand (a HAL value: IREE only)")
    if body.startswith("%"):
        return _stablehlo_check(name, body)
    if not body.startswith("("):
        raise IreeSyntaxError(f"{name} {body!r}")
    close = _matching(body, 0)
    inner, rest = body[1:close - 1], body[close:].strip()
    attrs = ""
    if rest.startswith("{"):
        end = _matching(rest, 0)
        attrs, rest = rest[1:end - 1].strip(), rest[end:].strip()
    if not rest.startswith(":"):
        raise IreeSyntaxError(f"{name} {body!r}")
    kind = rest[1:].strip()
    operands, props = [], [attrs] if attrs else []
    for item in _split_top(inner, ","):
        word = item.split(None, 1)
        if item.startswith("%"):
            operands.append(item)
        elif len(word) == 2 and word[0] in ("atol", "rtol"):
            props.append(f"{word[0]} = {word[1]} : f32")
        else:
            props.append(f"value = {item}")
    if name in ("check.expect_eq", "check.expect_eq_const"):
        props.append("bitwise")  # IREE's module compares bytes (StableHLO's generic check.expect_eq does not)
    properties = f" <{{{', '.join(props)}}}>" if props else ""
    return f'"{name}"({", ".join(operands)}){properties} : ({", ".join([kind] * len(operands))}) -> ()'


def _stablehlo_check(name: str, body: str) -> str:
    """The generic form of a check op in StableHLO's syntax (its ``CheckOps.td``):
    ``expect_eq %a, %b : T``, ``expect_almost_eq %a, %b, tolerance = X : T``,
    ``expect_close %a, %b, max_ulp_difference = N : T, T``, and the ``_const`` forms
    ``expect_eq_const %a, dense<...> : T {tolerance = X}`` (the value's type is the operand's)."""
    if name not in (*CHECK_OPS, "check.expect_close"):
        raise IreeSyntaxError(f"{name}: StableHLO's interpreter op, which compares with what interpreter.probe "
                              "wrote to disk" if name == "check.expect_serialized_eq" else f"{name} {body!r}",
                              dialect="StableHLO's check")
    attrs = ""
    if body.endswith("}"):  # a trailing attribute dictionary
        opening = [i for i, ch, depth in _walk(body) if ch == "{" and depth == 1]
        if opening:
            attrs, body = body[opening[-1] + 1: -1].strip(), body[: opening[-1]].strip()
    props = [attrs] if attrs else []
    parts = _split_top(body, ",")
    if name.endswith("_const"):
        value = ", ".join(parts[1:])
        pieces = _split_top(value, ":")
        if len(parts) < 2 or len(pieces) < 2:
            raise IreeSyntaxError(f"{name} {body!r}", dialect="StableHLO's check")
        props.insert(0, f"value = {value}")
        return f'"{name}"({parts[0]}) <{{{", ".join(props)}}}> : ({pieces[-1]}) -> ()'
    pieces = _split_top(body, ":")
    head, kinds = ":".join(pieces[:-1]), pieces[-1]
    operands = [p for p in _split_top(head, ",") if p.startswith("%")]
    props += [p for p in _split_top(head, ",") if "=" in p and not p.startswith("%")]
    types = _split_top(kinds, ",")
    if not head or len(operands) != 2 or len(types) not in (1, 2):
        raise IreeSyntaxError(f"{name} {body!r}", dialect="StableHLO's check")
    properties = f" <{{{', '.join(props)}}}>" if props else ""
    return f'"{name}"({", ".join(operands)}){properties} : ({types[0]}, {types[-1]}) -> ()'


def _dynamic_constant(body: str, results: str, temporary: str) -> str:
    """IREE's ``flow.tensor.dynamic_constant dense<...> : T -> D`` (a constant the optimizer
    cannot see through, of a dynamic type): an unfoldable constant of ``T`` and its cast to
    ``D``, two ops on the op's line."""
    value, arrow, dynamic = re.sub(r"\s*\n\s*", " ", body).rpartition("->")  # no "->" in a value
    value, dynamic = value.strip(), dynamic.strip()
    if not arrow or not dynamic.startswith("tensor<"):
        raise IreeSyntaxError(f"flow.tensor.dynamic_constant {body.strip()!r}")
    static = _split_top(value, ":")[-1]
    return (f'{temporary} = "util.unfoldable_constant"() {{value = {value}}} : () -> {static} '
            f'{results}"tensor.cast"({temporary}) : ({static}) -> {dynamic}')


def rewrite(text: str) -> tuple[str, list[CheckSite]]:
    """``text`` with IREE's util and check ops in generic form, and the check ops found."""
    if not uses_iree_ops(text):
        return text, []
    mask = masked(text)
    out: list[str] = []
    sites: list[CheckSite] = []
    pos = 0
    for m in _OP.finditer(mask):
        if m.start() < pos:
            continue
        end = _op_end(mask, m.end("name"))
        name = m.group("name")
        original = text[m.end("name"):end]
        results = text[m.start("results"):m.end("results")] if m.group("results") else ""
        line = text.count("\n", 0, m.start()) + 1
        if name == "flow.tensor.dynamic_constant":  # an unfoldable constant, cast to its dynamic type
            generic = _dynamic_constant(_COMMENT.sub("", original), results, f"%__dynamic_constant_{line}")
            results = ""
        else:
            generic = re.sub(r"\s*\n\s*", " ", _generic(name, _COMMENT.sub("", original)))  # one line
        if name.startswith("check."):
            sites.append(CheckSite(name, line, len(m.group("indent")) + 1))
        out.append(text[pos:m.start()])
        out.append(m.group("indent") + results.replace("\n", " ") + generic + "\n" * original.count("\n"))
        pos = end
    out.append(text[pos:])
    return "".join(out), sites


def iree_only_dialects(text: str) -> list[str]:
    """The IREE-only dialects ``text`` uses (ops, attributes or types), but for the util and
    check ops this module rewrites; sorted."""
    mask = masked(text)
    mask = _OP.sub(lambda m: m.group("indent") + (m.group("results") or ""), mask)
    found = {m.group("quoted") or m.group("plain") for m in _DIALECT_USE.finditer(mask)}
    found |= {m.group(1).split(".")[0] for m in _GENERIC_OP.finditer(_COMMENT.sub("", text))  # "flow.op"(...)
              if not m.group(1).startswith(_HANDLED)}
    found |= {m.group("dialect") for m in _ATTRIBUTE_USE.finditer(mask)}
    return sorted(found & set(IREE_ONLY))


__all__ = ["CHECK_OPS", "IREE_ONLY", "CheckSite", "IreeSyntaxError", "iree_only_dialects", "masked", "rewrite",
           "uses_iree_ops"]


_UNKNOWN_OP = re.compile(r"custom op '([a-z_]\w*)\.[\w.]+' is unknown")


def newer_iree_syntax(errors: list[str]) -> bool:
    """Whether a parse failure in IREE's compiler (its error messages) may be a newer release's
    syntax: an op IREE's MLIR knows, written another way (op syntax changes between releases),
    or an unknown op of IREE's own dialects; not an upstream op IREE's MLIR has no such op of
    (``linalg.add``: no release of IREE takes it)."""
    unknown = next((m.group(1) for message in errors if (m := _UNKNOWN_OP.search(message))), None)
    return unknown is None or unknown in IREE_ONLY
