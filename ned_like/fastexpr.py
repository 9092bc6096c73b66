"""A fast path for one-token expressions: ``0.5``, ``100ns``, ``"updn"``, ``QDR``.

Almost every parameter override (``--set``, a named configuration, an
experiment's grid) is one number, quantity, plain string or name, and lark's
parser is built only to read it: about 40 ms of a small run's start-up.
:func:`simple` reads such a text with the grammar's own token patterns and
builds the node the grammar's transformer would build, with the same
location; anything else (an operator, a comment, an escape in a string, a
reserved word) returns None and goes to lark, so a parse or an error message
never changes (``tests/ned_like/test_fastexpr.py`` compares them).
"""

from __future__ import annotations

import functools
import importlib.resources
import re

from ibfabric.ned_like import ast
from ibfabric.ned_like.expr import number_literal, quantity_literal
from ibfabric.ned_like.model import Location, Value

__all__ = ["simple"]

#: The grammar's QUANTITY, NUMBER, STRING (without escapes) and NAME terminals, in the order of their
#: priorities (a test checks them against ``ned.lark``); whitespace as lark's ``common.WS``.
QUANTITY = r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![eE][-+]?\d)[A-Za-z]+(?:\/(?:km|cm|mm|m)(?![A-Za-z0-9_]))?(?![A-Za-z0-9_])"
NUMBER = r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_TOKEN = re.compile(rf'([ \t\f\r\n]*)(?:(?P<q>{QUANTITY})|(?P<n>{NUMBER})|"(?P<s>[^"\\\n]*)"|(?P<name>{NAME}))[ \t\f\r\n]*')


@functools.lru_cache(maxsize=1)
def keywords() -> frozenset[str]:
    """The grammar's reserved words (``TRUE: "true"``, ``"connections" ":"``...): every quoted word
    of ``ned.lark`` outside its comments, read without building lark."""
    grammar = importlib.resources.files("ibfabric.ned_like").joinpath("ned.lark").read_text()
    code = "\n".join(line.split("//")[0] for line in grammar.splitlines())
    return frozenset(re.findall(r'"([A-Za-z_][A-Za-z0-9_]*)"', code))


def simple(text: str, filename: str) -> ast.Expr | None:
    """The expression *text* if it is one number, quantity, escape-free string or
    non-reserved name (as lark would parse it, or raise the same
    :class:`~ibfabric.ned_like.errors.NedError`); None for anything else."""
    m = _TOKEN.fullmatch(text)
    if m is None:
        return None
    lead = m.group(1)
    nl = lead.rfind("\n")
    loc = Location(filename, lead.count("\n") + 1, len(lead) - nl)
    if m.group("q") is not None:
        return ast.Literal(quantity_literal(m.group("q"), loc), loc)
    if m.group("n") is not None:
        return ast.Literal(number_literal(m.group("n"), loc), loc)
    if m.group("s") is not None:
        return ast.Literal(Value(m.group("s")), loc)
    name = m.group("name")
    if name in keywords():
        return None
    return ast.Name(name, loc)
