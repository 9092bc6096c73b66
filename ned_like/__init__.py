"""The NED-like topology language of ibfabric.

A subset of OMNeT++ NED, parsed with lark and elaborated into plain frozen
data (:mod:`ibfabric.ned_like.model`) that the simulation kernel builds from.
The language is described in ``docs/ned-language.md``.

Examples
--------
>>> net = elaborate('''
... network demo
... {
...     submodules:
...         sw: Switch { numPorts = 4; }
...         hca[2]: HCA;
...     connections:
...         for i=0..1 {
...             sw.port[i+1] <--> Link { length = 2m; } <--> hca[i].port[1];
...         }
... }
... ''')
>>> [m.path for m in net.simple_modules()]
['demo.sw', 'demo.hca[0]', 'demo.hca[1]']
>>> net.module("demo.sw").params["routingDelay"]
Value(value=100.0, unit='ns')
>>> elaborate(write_ned(net)).canonical() == net.canonical()
True
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ibfabric.ned_like import ast, model
from ibfabric.ned_like.elaborate import Elaborator
from ibfabric.ned_like.errors import NedError
from ibfabric.ned_like.expr import EMPTY_SCOPE, evaluate
from ibfabric.ned_like.library import TypeLibrary, read_source
from ibfabric.ned_like.limits import Limits
from ibfabric.ned_like.model import ElaboratedNetwork, Location, Value
from ibfabric.ned_like.params import override_value
from ibfabric.ned_like.parser import parse, parse_expression
from ibfabric.ned_like.patterns import OverrideSet, PatternError, match
from ibfabric.ned_like.writer import write_ned

__all__ = [
    "ElaboratedNetwork",
    "Limits",
    "NedError",
    "OverrideSet",
    "PatternError",
    "TypeLibrary",
    "Value",
    "ast",
    "elaborate",
    "load_network",
    "match",
    "model",
    "parse",
    "parse_expression",
    "parse_value",
    "write_ned",
]


def elaborate(
    source: str | ast.NedFile | os.PathLike,
    *,
    network: str | None = None,
    library: TypeLibrary | None = None,
    overrides: OverrideSet | Mapping[str, str] | None = None,
    filename: str | None = None,
    limits: Limits | None = None,
) -> ElaboratedNetwork:
    """Elaborate a network from NED-like source.

    Parameters
    ----------
    source : str, ast.NedFile or path-like
        Source text (a ``str`` is always text, never a file name), a parsed
        file, or the path of a ``.ned`` file (its directory is then searched
        for the files of types it uses, see :meth:`TypeLibrary.add_search_dir`).
    network : str, optional
        The network to elaborate: a type name as written in the file or a
        qualified name.  By default the one network the file declares.
    library : TypeLibrary, optional
        The types the source can use; by default the built-in components.
        It is not modified: the source's types are added to a copy.
    overrides : OverrideSet or mapping of pattern to value text, optional
        Parameter overrides by wildcard path; they beat every assignment in
        the source.  Pass an OverrideSet to check ``overrides.unused()``
        afterwards.
    filename : str, optional
        The name used in locations (default: the path, or ``'<string>'``).
    limits : Limits, optional
        Resource limits (modules, gates, vector size, loop iterations); by
        default :meth:`Limits.from_env` (the defaults, or the
        ``IBFABRIC_MAX_*`` environment variables).

    Returns
    -------
    ElaboratedNetwork

    Raises
    ------
    NedError
        For any syntax or semantic error, at its location, and for input
        beyond a limit (see ``docs/ned-language.md``, *Limits*).
    """
    lib = library.copy() if library is not None else TypeLibrary.default()
    path = None
    if isinstance(source, ast.NedFile):
        nedfile = source
    elif isinstance(source, str):
        nedfile = parse(source, filename or "<string>")
    elif isinstance(source, os.PathLike):
        path = Path(source)
        lib.add_search_dir(path.parent)
        nedfile = parse(read_source(path), filename or str(path))
        lib.add_scanned(path, nedfile)
    else:
        raise TypeError(f"source must be NED text, a parsed file or a path, not {type(source).__name__}")
    lib.add_parsed(nedfile)
    lib.add_package_from_search_dirs(nedfile.package, exclude=path)
    decl = _choose_network(nedfile, network, lib)
    if overrides is None:
        overrides = OverrideSet()
    elif not isinstance(overrides, OverrideSet):
        overrides = OverrideSet(overrides)
    return Elaborator(lib, overrides, limits).run(decl, nedfile.filename)


def _choose_network(nedfile: ast.NedFile, network: str | None, lib: TypeLibrary) -> ast.TypeDecl:
    where = Location(nedfile.filename, 1, 1)
    if network is not None:
        for t in nedfile.types:
            if network in (t.name, t.qualname):
                return t
        return lib.get(network, context=nedfile, loc=where)
    networks = [t for t in nedfile.types if t.is_network]
    if not networks:
        raise NedError(f"no network in {nedfile.filename}; declare one with 'network Name {{ ... }}'", where)
    if len(networks) > 1:
        names = ", ".join(t.name for t in networks)
        raise NedError(f"several networks in {nedfile.filename} ({names}); choose one with network=", where)
    return networks[0]


def load_network(path: str | os.PathLike, **kw) -> ElaboratedNetwork:
    """Read the ``.ned`` file at *path* and elaborate it.

    The file's directory is searched for the ``.ned`` files of the types it
    uses (imported, or of its own package).  Keyword arguments are those of
    :func:`elaborate`.
    """
    return elaborate(Path(path), **kw)


def parse_value(text: str, *, type: str | None = None, unit: str | None = None, name: str = "value") -> Value:
    """The value of a constant NED expression (``100ns``, ``2 * 4``, ``"minhop"``).

    Parameters
    ----------
    text : str
        The expression; it cannot refer to parameters.
    type : {'int', 'double', 'bool', 'string'}, optional
        Convert the value to a parameter of this type (as an override would:
        for ``'string'``, a text that is not a string expression is the
        string itself).
    unit : str, optional
        The ``@unit`` of that parameter.
    name : str
        The parameter name used in error messages.

    Raises
    ------
    NedError
        On a syntax error or a value that does not fit.

    Examples
    --------
    >>> parse_value("2.5us")
    Value(value=2500.0, unit='ns')
    >>> parse_value("round-robin", type="string")
    Value(value='round-robin', unit=None)
    """
    if type is None:
        return evaluate(parse_expression(text, "<value>"), EMPTY_SCOPE)
    try:
        return override_value("value", text, type, unit, name, name)
    except NedError as e:
        raise NedError(e.message, Location("<value>", e.line, e.column)) from None

