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
import threading

import attrs
import lark
from lark import Token, Transformer

from ibfabric import units
from ibfabric.ned_like import ast
from ibfabric.ned_like.doccomments import attach_docs
from ibfabric.ned_like.errors import NedError
from ibfabric.ned_like.expr import number_literal, quantity_literal
from ibfabric.ned_like.limits import check_nesting
from ibfabric.ned_like.model import Location, Value
from ibfabric.ned_like.patterns import PatternError, compile_pattern
from ibfabric.ned_like import fastconn, fastexpr, parsecache

__all__ = ["parse", "parse_expression"]

_state = threading.local()


def _loc(x) -> Location:
    """The location of a token or node (of the first of a list)."""
    if isinstance(x, Token):
        return Location(_state.filename, x.line, x.column)
    if isinstance(x, (list, tuple)):
        for item in x:
            if isinstance(item, Token) or not (item is None or isinstance(item, str)):
                return _loc(item)
        raise ValueError("no location")  # pragma: no cover - every rule has a located child
    return x.loc


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"'}


def _unescape(token: Token) -> str:
    text = token.value[1:-1]
    if "\\" not in text:
        return text
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            nxt = text[i + 1]
            if nxt not in _ESCAPES:
                loc = Location(_state.filename, token.line, token.column + i + 1)
                raise NedError(f"unknown escape '\\{nxt}' in string (use \\\\, \\\", \\n, \\t or \\r)", loc)
            out.append(_ESCAPES[nxt])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _tagged(children, tag):
    return [c for c in children if isinstance(c, tuple) and c and c[0] == tag]


def _chain(left, op, right):
    kind = "+-" if op in "+-" else "*/%"
    if isinstance(left, ast.Chain) and left.rest[0][0] in kind:
        return ast.Chain(left.first, left.rest + ((op, right),), left.loc)
    return ast.Chain(left, ((op, right),), left.loc)


def _logic(op, left, right):
    if isinstance(left, ast.Logic) and left.op == op:
        return ast.Logic(op, left.operands + (right,), left.loc)
    return ast.Logic(op, (left, right), left.loc)


def _compare(op):
    return lambda self, c: ast.Compare(op, c[0], c[1], c[0].loc)


def _arith(op):
    return lambda self, c: _chain(c[0], op, c[1])


class _Builder(Transformer):
    """Builds ast values from the children of each grammar rule (used inside the parser)."""

    # ------------------------------------------------------------ expressions

    def number(self, c):
        return ast.Literal(number_literal(c[0].value, _loc(c[0])), _loc(c[0]))

    def quantity(self, c):
        return ast.Literal(quantity_literal(c[0].value, _loc(c[0])), _loc(c[0]))

    def string(self, c):
        return ast.Literal(Value(_unescape(c[0])), _loc(c[0]))

    def true(self, c):
        return ast.Literal(Value(True), _loc(c[0]))

    def false(self, c):
        return ast.Literal(Value(False), _loc(c[0]))

    def index_ref(self, c):
        return ast.IndexRef(_loc(c[0]))

    def name_ref(self, c):
        return ast.Name(c[0].value, _loc(c[0]))

    def call(self, c):
        args = tuple(a for a in c[1:] if a is not None)
        return ast.Call(c[0].value, args, _loc(c[0]))

    def cast(self, c):
        return ast.Call(c[0].value, (c[1],), _loc(c[0]))

    def sizeof(self, c):
        return ast.Sizeof(c[1].value, _loc(c[0]))

    def this_ref(self, c):
        return ast.ThisParam(c[1].value, _loc(c[0]))

    def sub_param(self, c):
        return ast.SubParam(c[0].value, None, c[1].value, _loc(c[0]))

    def subvec_param(self, c):
        return ast.SubParam(c[0].value, c[1][1], c[2].value, _loc(c[0]))

    def neg(self, c):
        x = c[0]
        if isinstance(x, ast.Literal) and type(x.value.value) in (int, float):
            return ast.Literal(Value(-x.value.value, x.value.unit), x.loc)
        return ast.Unary("-", x, x.loc)

    def pos(self, c):
        return ast.Unary("+", c[0], c[0].loc)

    def not_(self, c):
        return ast.Unary("!", c[0], c[0].loc)

    def pow(self, c):
        return ast.Power(c[0], c[1], c[0].loc)

    add = _arith("+")
    sub = _arith("-")
    mul = _arith("*")
    div = _arith("/")
    mod = _arith("%")
    eq = _compare("==")
    ne = _compare("!=")
    lt = _compare("<")
    le = _compare("<=")
    gt = _compare(">")
    ge = _compare(">=")

    def and_(self, c):
        return _logic("&&", c[0], c[1])

    def or_(self, c):
        return _logic("||", c[0], c[1])

    def cond(self, c):
        test, then, other = c
        if isinstance(other, ast.Cond):
            return ast.Cond(((test, then),) + other.cases, other.default, test.loc)
        return ast.Cond(((test, then),), other, test.loc)

    def bracket(self, c):
        return ("bracket", c[0])

    # ------------------------------------------------------------ parameters

    def ptype(self, c):
        return c[0]

    def pvalue(self, c):
        return ("value", c[0], False)

    def default_value(self, c):
        return ("value", c[0], True)

    def property(self, c):
        index = args = None
        for t in c[1:]:
            if t.type == "PROP_INDEX":
                index = t.value[1:-1]
            else:
                args = t.value[1:-1]
        return ast.Property(c[0].value, index, args, _loc(c[0]))

    def property_stmt(self, c):
        return c[0]

    def param_decl(self, c):
        if isinstance(c[0], Token) and c[0].type == "VOLATILE":
            raise NedError("'volatile' parameters are not supported (every value is computed once)", _loc(c[0]))
        ptype, name = c[0], c[1]
        props = tuple(x for x in c[2:] if isinstance(x, ast.Property))
        values = _tagged(c, "value")
        unit = None
        for p in props:
            if p.name == "unit":
                unit = (p.args or "").strip()
                if ptype.value not in ("int", "double"):
                    raise NedError(f"@unit is only for int and double parameters, not {ptype.value}", p.loc)
                try:
                    units.dimension(unit)
                except units.UnitError:
                    raise NedError(f"unknown unit '{unit}' in @unit", p.loc) from None
        value, is_default = (values[0][1], values[0][2]) if values else (None, False)
        return ast.ParamDecl(name.value, ptype.value, unit, value, is_default, _loc(name), props)

    def param_assign(self, c):
        _, value, is_default = _tagged(c, "value")[0]
        return ast.ParamAssign(c[0].value, value, is_default, _loc(c[0]))

    def deep_assign(self, c):
        _, value, is_default = c[1]
        token = c[0]
        try:
            compile_pattern(token.value)
        except PatternError as e:
            loc = Location(_state.filename, token.line, token.column + e.position)
            raise NedError(f"invalid pattern '{token.value}': {e}", loc) from None
        return ast.ParamAssign(token.value, value, is_default, _loc(token))

    # ------------------------------------------------------------ gates

    def gatekind(self, c):
        return c[0]

    def gate_vector(self, c):
        return ("vector", c[0] if c else None)

    def gate_decl(self, c):
        kind, name = c[0], c[1]
        vec = _tagged(c, "vector")
        return ast.GateDecl(name.value, kind.value, bool(vec), vec[0][1] if vec else None, _loc(name))

    def gate_size(self, c):
        return ast.GateDecl(c[0].value, None, True, c[1], _loc(c[0]))

    # ------------------------------------------------------------ submodules

    def qname(self, c):
        return ast.QName(".".join(t.value for t in c), _loc(c[0]))

    decl_name = qname

    def plain_type(self, c):
        return ("type", c[0])

    def like_type(self, c):
        if len(c) == 2:
            return ("like", c[0], c[1])
        return ("like", None, c[0])

    def sub_condition(self, c):
        return ("if", c[0])

    def sub_body(self, c):
        params = [x for x in c if not isinstance(x, tuple)]
        for _, items in _tagged(c, "params"):
            params.extend(items)
        gates = [g for _, items in _tagged(c, "gates") for g in items]
        return ("body", _body_assignments(params, "a submodule body"), tuple(gates))

    def sub_end(self, c):
        return c[0] if c else ("body", (), ())

    def submodule(self, c):
        name = c[0]
        vec = _tagged(c, "bracket")
        typ = _tagged(c, "type")
        like = _tagged(c, "like")
        cond = _tagged(c, "if")
        _, params, gates = _tagged(c, "body")[0]
        _check_unique(gates, "gate size")
        if typ:
            type_name, like_name, like_expr, like_loc = typ[0][1], None, None, None
        else:
            _, like_expr, like_name = like[0]
            type_name = None
            like_loc = like_expr.loc if like_expr is not None else like_name.loc
        return ast.Submodule(
            name=name.value, loc=_loc(name), vector=vec[0][1] if vec else None,
            type_name=type_name, like=like_name, like_expr=like_expr, like_loc=like_loc,
            condition=cond[0][1] if cond else None, params=params, gates=tuple(gates),
        )

    # ------------------------------------------------------------ connections

    def arrow(self, c):
        return c[0]

    def gate_index(self, c):
        if isinstance(c[0], Token):
            return ("plusplus", None)
        return ("index", c[0][1])

    def gate_ref(self, c):
        name = c[0]
        half = index = None
        plusplus = False
        for x in c[1:]:
            if isinstance(x, Token):
                half = x.value[1]
            elif x[0] == "plusplus":
                plusplus = True
            else:
                index = x[1]
        return (name, half, index, plusplus)

    def own_gate(self, c):
        name, half, index, pp = c[0]
        return ast.GateSpec(None, None, name.value, half, index, pp, _loc(name), _loc(name))

    def sub_gate(self, c):
        name, half, index, pp = c[1]
        return ast.GateSpec(c[0].value, None, name.value, half, index, pp, _loc(c[0]), _loc(name))

    def subvec_gate(self, c):
        name, half, index, pp = c[2]
        return ast.GateSpec(c[0].value, c[1][1], name.value, half, index, pp, _loc(c[0]), _loc(name))

    def channel_body(self, c):
        return ("chbody", _body_assignments(list(c), "a channel body"))

    def typed_channel(self, c):
        body = _tagged(c, "chbody")
        return ast.ChannelSpec(c[0], body[0][1] if body else (), c[0].loc)

    def untyped_channel(self, c):
        return ast.ChannelSpec(None, c[0][1], _loc(c[0][1]) if c[0][1] else None)

    def loop_var(self, c):
        return ast.LoopVar(c[0].value, c[1], c[2], _loc(c[0]))

    def suffix_for(self, c):
        return ("for", tuple(c))

    def suffix_if(self, c):
        return ("if", c[0])

    def connection(self, c):
        left = c[0]
        arrows = [x for x in c if isinstance(x, Token)]
        channel = next((x for x in c if isinstance(x, ast.ChannelSpec)), None)
        gates = [x for x in c if isinstance(x, ast.GateSpec)]
        if len(arrows) == 2 and arrows[0].value != arrows[1].value:
            raise NedError(f"mismatched arrows '{arrows[0].value}' and '{arrows[1].value}'", _loc(arrows[1]))
        if channel is not None and channel.loc is None:
            channel = ast.ChannelSpec(None, (), _loc(arrows[0]))
        item: ast.ConnItem = ast.ConnectionDecl(left, arrows[0].value, gates[1], channel, left.loc)
        for suffix in reversed([x for x in c if isinstance(x, tuple)]):
            if suffix[0] == "for":
                item = ast.ConnLoop(suffix[1], (item,), suffix[1][0].loc)
            else:
                item = ast.ConnIf(suffix[1], (item,), suffix[1].loc)
        return item

    def conn_for(self, c):
        vars_ = tuple(x for x in c if isinstance(x, ast.LoopVar))
        body = tuple(x for x in c if not isinstance(x, ast.LoopVar))
        return ast.ConnLoop(vars_, body, vars_[0].loc)

    def conn_if(self, c):
        return ast.ConnIf(c[0], tuple(c[1:]), c[0].loc)

    # ------------------------------------------------------------ types

    def typekind(self, c):
        return c[0]

    def extends_clause(self, c):
        return ("extends", tuple(c))

    def like_clause(self, c):
        return ("likes", tuple(c))

    def params_section(self, c):
        return ("params", tuple(c))

    def gates_section(self, c):
        return ("gates", tuple(c))

    sub_params = params_section
    sub_gates = gates_section

    def submodules_section(self, c):
        return ("submodules", tuple(c))

    def connections_section(self, c):
        allow = bool(c) and isinstance(c[0], Token) and c[0].type == "ALLOWUNCONNECTED"
        return ("connections", allow, tuple(c[1:] if allow else c))

    def type_body(self, c):
        params = [x for x in c if not isinstance(x, tuple)]
        for _, items in _tagged(c, "params"):
            params.extend(items)
        body = {"params": params, "gates": (), "submodules": (), "connections": (), "allow": False}
        for x in c:
            if isinstance(x, tuple) and x[0] in ("gates", "submodules"):
                body[x[0]] = x[1]
            elif isinstance(x, tuple) and x[0] == "connections":
                body["allow"], body["connections"] = x[1], x[2]
        return ("body", body)

    def type_decl(self, c):
        kind, name = c[0], c[1]
        body = _tagged(c, "body")[0][1]
        extends = _tagged(c, "extends")
        likes = _tagged(c, "likes")
        return _make_type(
            kind.value, name, extends[0][1] if extends else (), likes[0][1] if likes else (), body
        )

    def package_decl(self, c):
        return ("package", ".".join(t.value for t in c), _loc(c[0]))

    def import_decl(self, c):
        names = [t.value for t in c if t.type == "NAME"]
        wildcard = c[-1].type == "IMPORT_STAR"
        return ast.Import(".".join(names), wildcard, _loc(c[0]))

    def start(self, c):
        return list(c)


def _check_unique(items, what: str) -> None:
    seen: dict[str, Location] = {}
    for item in items:
        name = getattr(item, "name", None) or getattr(item, "pattern", None)
        if name in seen:
            raise NedError(f"duplicate {what} '{name}' (first at {seen[name]})", item.loc)
        seen[name] = item.loc


def _body_assignments(items, where: str) -> tuple[ast.ParamAssign, ...]:
    out = []
    for x in items:
        if isinstance(x, ast.ParamDecl):
            raise NedError(f"cannot declare parameter '{x.name}' in {where} (only assignments)", x.loc)
        if isinstance(x, ast.ParamAssign):
            out.append(x)
    _check_unique(out, "assignment of")
    return tuple(out)


def _make_type(kind: str, name: ast.QName, extends, likes, body) -> ast.TypeDecl:
    params = [x for x in body["params"] if not isinstance(x, ast.Property)]
    props = tuple(x for x in body["params"] if isinstance(x, ast.Property))
    _check_unique(params, "parameter")
    _check_unique(body["gates"], "gate")
    _check_unique(body["submodules"], "submodule")
    for g in body["gates"]:
        if g.kind is None:  # pragma: no cover - the grammar gives every declared gate a kind
            raise NedError(f"gate '{g.name}' needs input, output or inout", g.loc)
    interface = kind in ("moduleinterface", "channelinterface")
    compound = kind in ("module", "network")
    if body["submodules"] and not compound:
        raise NedError(f"a {kind} cannot have submodules", body["submodules"][0].loc)
    if body["connections"] and not compound:
        raise NedError(f"a {kind} cannot have connections", _loc(body["connections"]))
    if body["gates"] and kind in ("channel", "channelinterface"):
        raise NedError(f"a {kind} cannot have gates", body["gates"][0].loc)
    for p in params:
        if isinstance(p, ast.ParamAssign) and p.is_deep and not compound:
            raise NedError(f"deep assignment '{p.pattern}' is only allowed in a compound module", p.loc)
        if interface and (isinstance(p, ast.ParamAssign) or p.value is not None):
            raise NedError(f"a {kind} declares parameters but cannot give them values", p.loc)
    if interface and likes:
        raise NedError(f"a {kind} cannot be 'like' another; use 'extends'", likes[0].loc)
    if len(extends) > 1 and not interface:
        raise NedError(f"a {kind} can extend only one type", extends[1].loc)
    return ast.TypeDecl(
        kind=kind, name=name.name, qualname=name.name, loc=name.loc, extends=tuple(extends),
        likes=tuple(likes), params=tuple(params), properties=props, gates=tuple(body["gates"]),
        submodules=tuple(body["submodules"]), connections=tuple(body["connections"]),
        allow_unconnected=body["allow"],
    )


# ---------------------------------------------------------------- the parser and its errors


def _collect_comment(token: Token) -> Token:
    """Lexer callback: keep a comment token (the grammar ignores them) for :func:`attach_docs`."""
    _state.comments.append(token)
    return token


@functools.lru_cache(maxsize=1)
def _lark() -> lark.Lark:
    grammar = importlib.resources.files("ibfabric.ned_like").joinpath("ned.lark").read_text()
    return lark.Lark(grammar, parser="lalr", start=["start", "expr_only"], transformer=_Builder(),
                     cache=_grammar_cache(grammar), lexer_callbacks={"COMMENT": _collect_comment})


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
