"""Reference pages generated from the code: ``python -m ibfabric.docgen parameters > docs/parameters.md``.

:func:`parameters_page` writes every parameter of every module type ibfabric
ships (the ``.ned`` files of :mod:`ibfabric.components` and the NED that
built-in plugins register) with its type, unit, default and documentation
comment, read from the parsed declarations (:attr:`ParamDecl.doc
<ibfabric.ned_like.ast.ParamDecl>`).  ``tests/test_docs.py`` fails when the
committed page differs from what this module writes.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence

from ibfabric.ned_like import TypeLibrary, ast
from ibfabric.ned_like.library import BUILTIN_PACKAGE, EffectiveType

__all__ = ["expr_text", "main", "parameters_page", "shipped_types"]

#: Section titles of the page, by kind of type, in page order.
KINDS = {
    "simple": "Simple modules",
    "module": "Compound modules",
    "network": "Networks",
    "channel": "Channels",
    "moduleinterface": "Module interfaces",
    "channelinterface": "Channel interfaces",
}

_PRECEDENCE = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 3, "<=": 3, ">": 3, ">=": 3, "+": 4, "-": 4,
               "*": 5, "/": 5, "%": 5}


def shipped_types() -> tuple[TypeLibrary, list[tuple[EffectiveType, str, str]]]:
    """The library of the shipped types and ``(effective type, source, implementation)`` of each.

    *source* is where the type is declared (``components/ib.ned`` or
    ``plugin NAME``), *implementation* the Python class registered for it
    (``''`` for interfaces and types without one).  Types of third-party
    plugins are left out.
    """
    from ibfabric.plugins.manager import PluginSet

    lib = TypeLibrary.default()
    impl: dict[str, str] = {}
    plugin_files: set[str] = set()
    for reg in PluginSet.load().module_types:
        if not reg.builtin:
            continue
        impl[reg.name] = f"{reg.obj.__module__}.{reg.obj.__qualname__}"
        ned = reg.extra.get("ned")
        if ned:
            name = f"<plugin {reg.plugin}>"
            if name not in plugin_files:
                plugin_files.add(name)
                lib.add_source(ned, name)
    out = []
    for decl in sorted(lib, key=lambda d: (list(KINDS).index(d.kind), d.qualname)):
        f = decl.loc.file
        if f.startswith(f"{BUILTIN_PACKAGE}/"):
            source = "components/" + f.partition("/")[2]
        elif f in plugin_files:
            source = f.strip("<>")
        else:  # pragma: no cover - the library holds only the files added above
            continue
        out.append((lib.effective(decl.qualname), source, impl.get(decl.qualname, "")))
    return lib, out


def expr_text(e: ast.Expr) -> str:
    """A NED expression written back as text (``numPorts + 1``, ``100ns``, ``"fifo"``)."""
    return _expr(e, 0)


def _expr(e, outer: int) -> str:
    if isinstance(e, ast.Literal):
        return e.value.ned()
    if isinstance(e, ast.Name):
        return e.name
    if isinstance(e, ast.IndexRef):
        return "index"
    if isinstance(e, ast.ThisParam):
        return f"this.{e.name}"
    if isinstance(e, ast.SubParam):
        return f"{e.module}{'' if e.index is None else '[' + _expr(e.index, 0) + ']'}.{e.name}"
    if isinstance(e, ast.Sizeof):
        return f"sizeof({e.name})"
    if isinstance(e, ast.Call):
        return f"{e.func}({', '.join(_expr(a, 0) for a in e.args)})"
    if isinstance(e, ast.Unary):
        return e.op + _expr(e.operand, 7)
    if isinstance(e, ast.Power):
        text, level = f"{_expr(e.base, 8)} ^ {_expr(e.exponent, 7)}", 6
    elif isinstance(e, ast.Chain):
        level = _PRECEDENCE[e.rest[0][0]]
        text = _expr(e.first, level) + "".join(f" {op} {_expr(x, level + 1)}" for op, x in e.rest)
    elif isinstance(e, ast.Compare):
        level = 3
        text = f"{_expr(e.left, 4)} {e.op} {_expr(e.right, 4)}"
    elif isinstance(e, ast.Logic):
        level = _PRECEDENCE[e.op]
        text = f" {e.op} ".join(_expr(x, level + 1) for x in e.operands)
    elif isinstance(e, ast.Cond):
        level = 0
        text = " : ".join(f"{_expr(c, 1)} ? {_expr(v, 0)}" for c, v in e.cases) + f" : {_expr(e.default, 0)}"
    else:  # pragma: no cover - every expression node is handled above
        raise TypeError(f"not an expression: {e!r}")
    return f"({text})" if level < outer else text


def _cell(text: str) -> str:
    """*text* on one line for Markdown, its Markdown characters taken literally and its quoted
    values (``"fifo"``, ``"port:weight,..."``) as code."""
    out = []
    for i, part in enumerate(re.split(r'("[^"\n]*")', " ".join(text.split()))):
        if i % 2:
            out.append(_code(part))
        else:
            for c in "\\`*_[]<|":
                part = part.replace(c, "\\" + c)
            out.append(part)
    return "".join(out)


def _code(text: str) -> str:
    fence = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{fence}{pad}{text.replace('|', chr(92) + '|')}{pad}{fence}"


def parameters_page() -> str:
    """The Markdown of ``docs/parameters.md``."""
    _, types = shipped_types()
    lines = [
        "# Parameters of the module types",
        "",
        "<!-- Generated by `python -m ibfabric.docgen parameters > docs/parameters.md` from the NED",
        "     declarations (components/*.ned); edit the doc comments there, not this page. -->",
        "",
        "Every parameter of every module type ibfabric ships, as its NED declaration gives it: type,",
        "unit, default and the documentation comment written above it or after it on its line",
        "(see [the NED language](ned-language.md#documentation-comments)).  A value is set in a",
        "topology file (`sw: Switch { numVLs = 4; }`), by wildcard path (`--set '**.numVLs=4'`,",
        "`overrides={'**.numVLs': '4'}`, experiment files), or left at the default",
        "([who wins](ned-language.md#parameter-values-who-wins)).  A parameter with a unit takes a",
        "quantity of that dimension in any of its units (`1us` or `1000ns`; `4KiB` or `4096B`); the",
        "default is shown in the unit it is stored in.  `tests/test_docs.py` fails when this page is",
        "out of date or a parameter lacks its documentation.",
    ]
    kind = None
    for eff, source, impl in types:
        decl = eff.decl
        if decl.kind != kind:
            kind = decl.kind
            lines += ["", f"## {KINDS[kind]}"]
        lines += ["", f"### `{decl.name}`", ""]
        where = f"`{decl.qualname}`, declared in `{source}`"
        if impl:
            where += f", implemented by `{impl}`"
        if decl.likes:
            where += "; like " + ", ".join(f"`{q.name}`" for q in decl.likes)
        if decl.extends:
            where += "; extends " + ", ".join(f"`{q.name}`" for q in decl.extends)
        lines += [where + "."]
        for paragraph in decl.doc.split("\n\n") if decl.doc else ():
            lines += ["", _cell(paragraph)]
        if not eff.params:
            lines += ["", "Parameters: none."]
            continue
        lines += ["", "| parameter | type | unit | default | description |", "| --- | --- | --- | --- | --- |"]
        for spec in eff.params.values():
            p = spec.decl
            default = "none: it must be set" if spec.default is None else _code(expr_text(spec.default))
            doc = _cell(p.doc)
            if p not in decl.params:
                doc += " (inherited)"
            lines.append(f"| `{p.name}` | {p.type} | {p.unit or ''} | {default} | {doc} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ibfabric.docgen parameters``: print the page to stdout."""
    args = list(sys.argv[1:] if argv is None else argv)
    pages = {"parameters": parameters_page}
    if len(args) != 1 or args[0] not in pages:
        print(f"usage: python -m ibfabric.docgen {{{','.join(pages)}}} > docs/PAGE.md", file=sys.stderr)
        return 2
    sys.stdout.write(pages[args[0]]())
    return 0


if __name__ == "__main__":
    sys.exit(main())
