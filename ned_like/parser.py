"""Parsing NED-like source into :mod:`ibfabric.ned_like.ast` values.

The grammar is ``ned.lark`` (LALR(1)); the tree is built while parsing, so
parsing is one linear pass without recursion.  Syntax errors become one-line
:class:`~ibfabric.ned_like.errors.NedError` messages with the position of the
unexpected token and what was expected there::

    topo.ned:12:7: expected ';' or '{' but found 'sw'

Checks that need only the text of one file are made here too: duplicate
names, constructs a kind of type cannot have (a simple module with
submodules), unknown units in ``@unit`` and in quantity literals, malformed
deep-assignment patterns, ``volatile``.

Comments are skipped by the grammar but collected by the lexer, and the
documentation comments of types and parameter declarations are attached to
them afterwards (:mod:`ibfabric.ned_like.doccomments`), as OMNeT++ does: the ``//`` lines
right above a declaration, and a ``//`` comment after it on its line.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import os
import sys
from typing import TYPE_CHECKING

import attrs

from ibfabric.ned_like import ast
from ibfabric.ned_like.doccomments import attach_docs
from ibfabric.ned_like.errors import NedError
from ibfabric.ned_like.limits import check_nesting
from ibfabric.ned_like.model import Location
from ibfabric.ned_like import fastconn, fastexpr, parsecache

if TYPE_CHECKING:  # pragma: no cover
    import lark
    from lark import Token

__all__ = ["parse", "parse_expression"]

# lark and the transformer (ibfabric.ned_like._builder) are imported when a text is first parsed:
# a run whose NED files come from the parse cache and whose values are single tokens never needs them

# ---------------------------------------------------------------- the parser and its errors


@functools.lru_cache(maxsize=1)
def _lark() -> lark.Lark:
    import lark

    from ibfabric.ned_like._builder import _Builder, collect_comment

    grammar = importlib.resources.files("ibfabric.ned_like").joinpath("ned.lark").read_text()
    return lark.Lark(grammar, parser="lalr", start=["start", "expr_only"], transformer=_Builder(),
                     cache=_grammar_cache(grammar), lexer_callbacks={"COMMENT": collect_comment})


def _grammar_cache(grammar: str) -> str | bool:
    """Where lark keeps the analysed grammar between processes (``False``: nowhere).

    Building the LALR tables takes about 0.2-0.4 s, most of a small run's
    start-up; loading them back takes a tenth of that.  Not lark's own
    ``cache=True``: that writes a pickle under a predictable name into the
    shared, world-writable temporary directory, which another user could plant
    (and loading a pickle runs code).  The file lives in the user's cache
    directory instead, ``$IBFABRIC_CACHE_DIR`` or ``$XDG_CACHE_HOME/ibfabric``
    (``~/.cache/ibfabric``, :func:`~ibfabric.ned_like.parsecache.cache_dir`), created
    private; ``IBFABRIC_CACHE_DIR=`` (empty) turns it off.  lark checks the file's header, a hash of the grammar, its
    options, lark's and Python's versions, and rebuilds (and rewrites) a stale
    or damaged file, so a cache can only cost time, never change a parse.
    """
    import lark

    base = parsecache.cache_dir()
    if base is None:
        return False
    key = hashlib.sha256(grammar.encode()).hexdigest()[:16]
    py = "".join(map(str, sys.version_info[:2]))
    return os.path.join(base, f"ned-grammar-{key}-lark{lark.__version__}-py{py}.cache")


_TERMINAL_NAMES = {
    "NAME": "a name",
    "NUMBER": "a number",
    "QUANTITY": "a quantity",
    "STRING": "a string",
    "DEEP_PATTERN": "a parameter pattern",
    "PROP_INDEX": "'['",
    "PROP_ARGS": "'('",
    "HALF": "'$i' or '$o'",
    "$END": "end of file",
}
_EXPRESSION_STARTS = {
    "NUMBER", "QUANTITY", "STRING", "NAME", "TRUE", "FALSE", "INDEX", "SIZEOF", "THIS",
    "LPAR", "MINUS", "PLUS", "BANG", "INT", "DOUBLE", "BOOL", "STRING_KW",
}


def _describe_expected(expected: set[str]) -> str:
    import lark

    names = set(expected)
    words = []
    if "NUMBER" in names and "NAME" in names:
        names -= _EXPRESSION_STARTS
        words.append("an expression")
    terminals = {t.name: t for t in _lark().terminals}
    for name in sorted(names):
        if name in _TERMINAL_NAMES:
            words.append(_TERMINAL_NAMES[name])
        elif name in terminals and isinstance(terminals[name].pattern, lark.lexer.PatternStr):
            words.append(f"'{terminals[name].pattern.value}'")
        else:
            words.append(name.lower())
    words = sorted(set(words), key=lambda w: (not w.startswith("'"), w))
    if not words:
        return "nothing"
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


def _found(token: Token) -> str:
    if token.type == "$END":
        return "end of file"
    text = token.value if len(token.value) <= 24 else token.value[:21] + "..."
    return f"'{text}'"


def _syntax_error(e: lark.exceptions.UnexpectedInput, text: str, filename: str) -> NedError:
    import lark

    line, column = max(e.line, 1), max(e.column, 1)
    if isinstance(e, lark.exceptions.UnexpectedToken) and e.token.type == "$END" or isinstance(
        e, lark.exceptions.UnexpectedEOF
    ):
        line = text.count("\n") + 1
        column = len(text) - (text.rfind("\n") + 1) + 1
    if isinstance(e, lark.exceptions.UnexpectedToken):
        msg = f"expected {_describe_expected(e.accepts or e.expected)} but found {_found(e.token)}"
    elif isinstance(e, lark.exceptions.UnexpectedCharacters):
        msg = f"unexpected character {e.char!r}"
        if e.allowed:
            msg += f", expected {_describe_expected(e.allowed)}"
    elif isinstance(e, lark.exceptions.UnexpectedEOF):
        msg = f"unexpected end of file, expected {_describe_expected(set(e.expected))}"
    else:  # pragma: no cover - lark raises only the three above
        msg = str(e).splitlines()[0]
    return NedError(msg, Location(filename, line, column))


def _run(text: str, filename: str, start: str):
    import lark

    from ibfabric.ned_like._builder import _state

    _state.filename = filename
    _state.comments = []
    try:
        return _lark().parse(text, start=start)
    except lark.exceptions.UnexpectedInput as e:
        raise _syntax_error(e, text, filename) from None


def parse(text: str, filename: str = "<string>") -> ast.NedFile:
    """Parse NED-like source.

    Parameters
    ----------
    text : str
        The source.
    filename : str
        The name used in locations and error messages.

    Returns
    -------
    ast.NedFile
        The file's package, imports and type declarations; every declaration
        knows the package and imports of the file, and types and parameter
        declarations carry their documentation comments (``doc``; see
        :mod:`ibfabric.ned_like.doccomments`).

    Raises
    ------
    NedError
        On a syntax error (with the position of the unexpected token and what
        was expected) or a check that needs only this file (duplicate names,
        unknown units, a simple module with submodules, numbers beyond 64
        bits, nesting beyond the limits of :mod:`ibfabric.ned_like.limits`, ...).

    Examples
    --------
    >>> f = parse("package demo; simple Node { gates: inout port[]; }")
    >>> f.types[0].qualname
    'demo.Node'

    Parsed files are kept between processes (:mod:`ibfabric.ned_like.parsecache`).
    """
    nedfile = parsecache.load(text, filename)
    if nedfile is None:
        nedfile = _parse(text, filename)
        parsecache.store(text, filename, nedfile)
    return nedfile


class _Fallback(Exception):
    """The fast path's sections do not fit the parse (the whole text goes to lark)."""


def _parse(text: str, filename: str) -> ast.NedFile:
    try:
        fast = fastconn.split(text, filename, fastexpr.keywords())
    except NedError:
        fast = None
    if fast is not None:
        try:
            return _parse_sections(fast[0], filename, text, fast[1])
        except (NedError, _Fallback):
            pass  # lark reads it all and gives its own answer or message
    return _parse_sections(text, filename, text, ())


def _parse_sections(lark_text: str, filename: str, text: str, sections) -> ast.NedFile:
    """Parse *lark_text* with lark, then put the connections sections the fast path read
    (:mod:`ibfabric.ned_like.fastconn`) into the types that declare them."""
    items = _run(lark_text, filename, "start")
    package = ""
    imports: list[ast.Import] = []
    types: list[ast.TypeDecl] = []
    for item in items:
        if isinstance(item, tuple):
            if package or imports or types:
                raise NedError("'package' must come first in the file, and only once", item[2])
            package = item[1]
        elif isinstance(item, ast.Import):
            if types:
                raise NedError("imports must come before the type declarations", item.loc)
            imports.append(item)
        else:
            types.append(item)
    for line, conns in sections:
        owner = max((i for i, t in enumerate(types) if t.loc.line <= line), default=None)
        if owner is None or types[owner].kind not in ("module", "network") or types[owner].connections:
            raise _Fallback
        types[owner] = attrs.evolve(types[owner], connections=conns)
    seen: dict[str, Location] = {}
    out = []
    for t in types:
        qualname = t.name if "." in t.name or not package else f"{package}.{t.name}"
        if qualname in seen:
            raise NedError(f"duplicate type '{t.name}' (first at {seen[qualname]})", t.loc)
        seen[qualname] = t.loc
        out.append(attrs.evolve(t, qualname=qualname, package=package, imports=tuple(imports)))
    check_nesting(types)
    from ibfabric.ned_like._builder import _state

    out = attach_docs(text, out, _state.comments)
    return ast.NedFile(filename, package, tuple(imports), tuple(out))


def parse_expression(text: str, filename: str = "<string>") -> ast.Expr:
    """Parse one expression (``100ns``, ``"minhop"``, ``2 * n + 1``).

    Raises
    ------
    NedError
        On a syntax error, an unknown unit, a number out of range or an
        expression nested too deeply.
    """
    expr = fastexpr.simple(text, filename)  # one token (most overrides): no lark parser to build
    if expr is None:
        expr = _run(text, filename, "expr_only")
        check_nesting(expr)
    return expr
