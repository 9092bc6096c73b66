"""The lark transformer that builds :mod:`ibfabric.ned_like.ast` values while the
NED grammar is parsed (:mod:`ibfabric.ned_like.parser`), and the checks of one file it makes.

A module of its own so that lark is imported only when a text is parsed:
a run whose files come from the parse cache (:mod:`ibfabric.ned_like.parsecache`)
and whose parameter values are single tokens (:mod:`ibfabric.ned_like.fastexpr`)
never imports it (about 25 ms of start-up).
"""

from __future__ import annotations

import threading

from lark import Token, Transformer

from ibfabric import units
from ibfabric.ned_like import ast
from ibfabric.ned_like.errors import NedError
from ibfabric.ned_like.expr import number_literal, quantity_literal
from ibfabric.ned_like.model import Location, Value
from ibfabric.ned_like.patterns import PatternError, compile_pattern


_state = threading.local()


def collect_comment(token: Token) -> Token:
    """Lexer callback: keep a comment token (the grammar ignores them) for
    :func:`~ibfabric.ned_like.doccomments.attach_docs`."""
    _state.comments.append(token)
    return token


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
