"""A fast path for the long connections sections of generated files.

A generated fabric is mostly connection lines of one shape,
``h0.port[1] <--> Link <--> s2_3.port[2];`` -- 98,304 of them in a 32-ary
3-tree, whose file lark takes 17 s to parse.  :func:`split` finds every
``connections:`` section whose lines *all* have that shape (a gate of a
scalar submodule with a plain integer index, an arrow, an optional channel
type name and the same arrow, another such gate), and at least
:data:`MIN_LINES` of them; it returns the text with those lines blanked
(lark parses the rest, line numbers unchanged) and their
:class:`~ibfabric.ned_like.ast.ConnectionDecl` items, built as the grammar's
transformer builds them, locations included.  Anything else -- a comment, a
``$i`` half, a vector index, a channel body, a keyword as a name, mismatched
arrows, a number lark would read differently -- leaves the whole section to
lark, so the fast path never changes a parse or an error message
(``tests/ned_like/test_fastconn.py`` compares them).
"""

from __future__ import annotations

import re

from ibfabric.ned_like import ast
from ibfabric.ned_like.expr import number_literal
from ibfabric.ned_like.fastexpr import NAME
from ibfabric.ned_like.model import Location

__all__ = ["split", "MIN_LINES"]

#: Sections shorter than this stay with lark (the fast path is for big generated files).
MIN_LINES = 64

_INT = r"0|[1-9][0-9]*"
_GATE = rf"({NAME})[ \t]*\.[ \t]*({NAME})[ \t]*\[[ \t]*({_INT})[ \t]*\]"
_ARROW = r"(<-->|-->|<--)"
_LINE = re.compile(rf"[ \t]*{_GATE}[ \t]*{_ARROW}[ \t]*(?:({NAME})[ \t]*{_ARROW}[ \t]*)?{_GATE}[ \t]*;[ \t]*")
_HEADER = re.compile(r"[ \t]*connections[ \t]*:[ \t]*")
_FOOTER = re.compile(r"[ \t]*\}[ \t]*;?[ \t]*")


def split(text: str, filename: str, keywords: frozenset[str]) -> tuple[str, list[tuple[int, tuple]]] | None:
    """The text with the long simple connections sections blanked, and ``[(line of the
    'connections:' header, items)]``; None if there is no such section.  *keywords* are
    the grammar's reserved words (a name among them leaves its section to lark)."""
    if text.count("\n") < MIN_LINES:
        return None
    lines = text.split("\n")
    sections = []
    i, n = 0, len(lines)
    while i < n:
        if not _HEADER.fullmatch(lines[i]):
            i += 1
            continue
        j = i + 1
        matches = []
        while j < n and (m := _LINE.fullmatch(lines[j])) is not None:
            matches.append(m)
            j += 1
        if len(matches) >= MIN_LINES and j < n and _FOOTER.fullmatch(lines[j]):
            items = _items(matches, i + 1, filename, keywords)
            if items is not None:
                sections.append((i + 1, items))
                for k in range(i + 1, j):
                    lines[k] = ""
        i = j
    if not sections:
        return None
    return "\n".join(lines), sections


def _items(matches: list[re.Match], start: int, filename: str, keywords: frozenset[str]) -> tuple | None:
    """The connections of a section's lines (*matches*, the first on line index *start*), or None
    if lark must read them."""
    out = []
    for k, m in enumerate(matches, start):
        mod_a, gate_a, idx_a, arrow1, chan, arrow2, mod_b, gate_b, idx_b = m.groups()
        if chan is not None and arrow1 != arrow2:
            return None  # lark's message for mismatched arrows
        for name in (mod_a, gate_a, mod_b, gate_b, chan):
            if name in keywords:
                return None
        line = k + 1

        def loc(group: int) -> Location:
            return Location(filename, line, m.start(group) + 1)

        left = ast.GateSpec(mod_a, None, gate_a, None, ast.Literal(number_literal(idx_a, loc(3)), loc(3)), False,
                            loc(1), loc(2))
        right = ast.GateSpec(mod_b, None, gate_b, None, ast.Literal(number_literal(idx_b, loc(9)), loc(9)), False,
                             loc(7), loc(8))
        channel = None if chan is None else ast.ChannelSpec(ast.QName(chan, loc(5)), (), loc(5))
        out.append(ast.ConnectionDecl(left, arrow1, right, channel, left.loc))
    return tuple(out)
