"""The syntax tree of NED-like source, as frozen values.

:func:`ibfabric.ned_like.parse` returns a :class:`NedFile`.  Every node carries
the :class:`~ibfabric.ned_like.model.Location` of its first token, which is
where semantic errors about it are reported.

Expressions are flattened where the language is associative, so that long
sums, ``||`` chains and ``?:`` chains are evaluated without deep recursion:
``a + b - c`` is one :class:`Chain`, ``a ? b : c ? d : e`` one :class:`Cond`.
"""

from __future__ import annotations

from typing import Literal as _Lit
from typing import Union

import attrs

from ibfabric.ned_like.model import Location, Value

__all__ = [
    "Call",
    "Chain",
    "ChannelSpec",
    "Compare",
    "Cond",
    "ConnIf",
    "ConnLoop",
    "ConnectionDecl",
    "Expr",
    "GateDecl",
    "GateSpec",
    "Import",
    "IndexRef",
    "Literal",
    "Logic",
    "LoopVar",
    "Name",
    "NedFile",
    "ParamAssign",
    "ParamDecl",
    "Power",
    "Property",
    "QName",
    "Sizeof",
    "SubParam",
    "Submodule",
    "ThisParam",
    "TypeDecl",
    "Unary",
]


# ---------------------------------------------------------------- expressions


@attrs.frozen
class Literal:
    """A constant: number, quantity (in canonical units), string or bool."""

    value: Value
    loc: Location


@attrs.frozen
class Name:
    """A parameter or loop-variable reference."""

    name: str
    loc: Location


@attrs.frozen
class IndexRef:
    """``index``: the index of the submodule in its vector."""

    loc: Location


@attrs.frozen
class ThisParam:
    """``this.name``: a parameter of the module whose body this is."""

    name: str
    loc: Location


@attrs.frozen
class SubParam:
    """``sub.name`` or ``sub[i].name``: a parameter of a submodule."""

    module: str
    index: Expr | None
    name: str
    loc: Location


@attrs.frozen
class Sizeof:
    """``sizeof(name)``: size of a submodule vector or of a gate vector."""

    name: str
    loc: Location


@attrs.frozen
class Call:
    """A function call, including the casts ``int(x)``, ``double(x)``, ``string(x)``, ``bool(x)``."""

    func: str
    args: tuple[Expr, ...]
    loc: Location


@attrs.frozen
class Unary:
    """``-x``, ``+x`` or ``!x``."""

    op: _Lit["-", "+", "!"]
    operand: Expr
    loc: Location


@attrs.frozen
class Chain:
    """A left-associative chain of ``+ -`` or ``* / %``: ``first op1 x1 op2 x2 ...``."""

    first: Expr
    rest: tuple[tuple[str, Expr], ...]
    loc: Location


@attrs.frozen
class Power:
    """``base ^ exponent`` (right-associative)."""

    base: Expr
    exponent: Expr
    loc: Location


@attrs.frozen
class Compare:
    """``left op right`` for ``== != < <= > >=``."""

    op: str
    left: Expr
    right: Expr
    loc: Location


@attrs.frozen
class Logic:
    """``a && b && ...`` or ``a || b || ...`` (short-circuit)."""

    op: _Lit["&&", "||"]
    operands: tuple[Expr, ...]
    loc: Location


@attrs.frozen
class Cond:
    """``c1 ? v1 : c2 ? v2 : ... : default``."""

    cases: tuple[tuple[Expr, Expr], ...]
    default: Expr
    loc: Location


Expr = Union[
    Literal, Name, IndexRef, ThisParam, SubParam, Sizeof, Call, Unary, Chain, Power, Compare, Logic, Cond
]


# ---------------------------------------------------------------- declarations


@attrs.frozen
class QName:
    """A (possibly dotted) type name as written, with its place."""

    name: str
    loc: Location


@attrs.frozen
class Property:
    """``@name[index](args)``; ``index`` and ``args`` are the raw text inside the brackets."""

    name: str
    index: str | None
    args: str | None
    loc: Location


@attrs.frozen
class ParamDecl:
    """A typed parameter declaration ``double delay @unit(ns) = 5ns;``.

    ``type`` is ``'int'``, ``'double'``, ``'bool'`` or ``'string'``; ``unit``
    the unit of ``@unit`` as written (None without one); ``value`` the default
    (None if the parameter has none) and ``is_default`` whether it was written
    ``default(...)``.  ``doc`` is its documentation comment (see
    :func:`~ibfabric.ned_like.parse`), ``''`` without one.
    """

    name: str
    type: str
    unit: str | None
    value: Expr | None
    is_default: bool
    loc: Location
    properties: tuple[Property, ...] = ()
    doc: str = ""


@attrs.frozen
class ParamAssign:
    """A parameter assignment ``pattern = value;``.

    A ``pattern`` without a dot assigns a parameter of the module itself
    (``lid = 3``); a dotted one is a deep assignment (``sw[3].lid = 7``,
    ``**.routingDelay = 50ns``).
    """

    pattern: str
    value: Expr
    is_default: bool
    loc: Location

    @property
    def is_deep(self) -> bool:
        """Whether the assignment is deep: its pattern has a dot (``sw[3].lid``, ``**.load``)."""
        return "." in self.pattern


@attrs.frozen
class GateDecl:
    """A gate declaration, or a gate-vector size in a submodule body.

    ``kind`` is ``'input'``, ``'output'`` or ``'inout'`` (None for a size in a
    submodule body); ``vector`` tells a vector; ``size`` is its size expression
    (None for ``port[]``).
    """

    name: str
    kind: str | None
    vector: bool
    size: Expr | None
    loc: Location


@attrs.frozen
class Submodule:
    """A submodule (or submodule vector) declaration.

    Either ``type_name`` is set (``sw: Switch``) or ``like`` is
    (``host: <expr> like IHost``, ``like_expr`` None for ``<>``).
    """

    name: str
    loc: Location
    vector: Expr | None
    type_name: QName | None
    like: QName | None
    like_expr: Expr | None
    like_loc: Location | None
    condition: Expr | None
    params: tuple[ParamAssign, ...]
    gates: tuple[GateDecl, ...]


@attrs.frozen
class GateSpec:
    """One end of a connection: ``[module[index].]gate[$half][index | ++]``.

    ``module`` None means a gate of the compound module itself.
    """

    module: str | None
    module_index: Expr | None
    gate: str
    half: _Lit["i", "o"] | None
    index: Expr | None
    plusplus: bool
    loc: Location
    gate_loc: Location


@attrs.frozen
class ChannelSpec:
    """The channel of a connection: type (None for ``{ ... }`` alone) and assignments."""

    type_name: QName | None
    params: tuple[ParamAssign, ...]
    loc: Location


@attrs.frozen
class ConnectionDecl:
    """``left arrow [channel arrow] right;`` with arrow ``'-->'``, ``'<--'`` or ``'<-->'``."""

    left: GateSpec
    arrow: str
    right: GateSpec
    channel: ChannelSpec | None
    loc: Location


@attrs.frozen
class LoopVar:
    """``name = start .. end`` (both ends inclusive)."""

    name: str
    start: Expr
    end: Expr
    loc: Location


@attrs.frozen
class ConnLoop:
    """``for i=a..b, j=c..d { ... }``: nested loops, outer first."""

    vars: tuple[LoopVar, ...]
    body: tuple[ConnItem, ...]
    loc: Location


@attrs.frozen
class ConnIf:
    """``if cond { ... }``."""

    condition: Expr
    body: tuple[ConnItem, ...]
    loc: Location


ConnItem = Union[ConnectionDecl, ConnLoop, ConnIf]


@attrs.frozen
class Import:
    """``import a.b.Type;`` or ``import a.b.*;`` (``wildcard`` True, ``name`` is the package)."""

    name: str
    wildcard: bool
    loc: Location


@attrs.frozen
class TypeDecl:
    """A type declaration.

    ``kind`` is ``'simple'``, ``'module'``, ``'network'``, ``'channel'``,
    ``'moduleinterface'`` or ``'channelinterface'``.  ``qualname`` is the
    name qualified by the file's ``package`` (a dotted ``name`` is already
    qualified).  ``package`` and ``imports`` are those of the declaring file:
    names used inside the declaration are resolved with them.  ``doc`` is the
    documentation comment above the declaration (``''`` without one).
    """

    kind: str
    name: str
    qualname: str
    loc: Location
    package: str = ""
    imports: tuple[Import, ...] = ()
    extends: tuple[QName, ...] = ()
    likes: tuple[QName, ...] = ()
    params: tuple[ParamDecl | ParamAssign, ...] = ()
    properties: tuple[Property, ...] = ()
    gates: tuple[GateDecl, ...] = ()
    submodules: tuple[Submodule, ...] = ()
    connections: tuple[ConnItem, ...] = ()
    allow_unconnected: bool = False
    doc: str = ""

    @property
    def simple_name(self) -> str:
        """The name without its package (``Switch`` of ``ibfabric.components.Switch``)."""
        return self.qualname.rpartition(".")[2]

    @property
    def is_network(self) -> bool:
        """A ``network``, or a ``module`` with ``@isNetwork`` (or ``@isNetwork(true)``)."""
        if self.kind == "network":
            return True
        return self.kind == "module" and any(
            p.name == "isNetwork" and (p.args is None or p.args.strip("() \t") in ("", "true"))
            for p in self.properties
        )

    @property
    def is_interface(self) -> bool:
        """Whether the declaration is a ``moduleinterface`` or a ``channelinterface``."""
        return self.kind in ("moduleinterface", "channelinterface")

    @property
    def is_module(self) -> bool:
        """A module type: simple, compound module or network."""
        return self.kind in ("simple", "module", "network")


@attrs.frozen
class NedFile:
    """A parsed source file."""

    filename: str
    package: str
    imports: tuple[Import, ...]
    types: tuple[TypeDecl, ...]
