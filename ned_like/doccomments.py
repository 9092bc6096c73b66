"""Documentation comments of NED-like declarations, as OMNeT++ reads them.

The grammar skips comments; the lexer hands them to the parser, which calls
:func:`attach_docs` once a file is parsed.  A type's documentation is the
block of ``//`` lines right above it; a parameter declaration's is that block
and the ``//`` comment after it on its line.  ``docs/ned-language.md``
(*Documentation comments*) describes the rule for users, and
:mod:`ibfabric.docgen` writes the parameter reference from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from ibfabric.ned_like import ast

if TYPE_CHECKING:  # pragma: no cover
    from lark import Token

__all__ = ["attach_docs"]


def _comment_text(token: Token) -> str:
    """The text of a ``//`` comment: without the slashes, one space after them and the line end."""
    text = token.value[2:].rstrip("\r")
    return text[1:] if text.startswith(" ") else text


def _paragraphs(lines: list[str]) -> str:
    """Comment lines as documentation: the lines joined by newlines, empty first and last lines dropped."""
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return "\n".join(line.rstrip() for line in lines)


def attach_docs(text: str, types: list[ast.TypeDecl], comments: list[Token]) -> list[ast.TypeDecl]:
    """*types* with their documentation comments, and those of their parameter declarations.

    A declaration's documentation is, as in OMNeT++, the block of comment
    lines right above its first line (each comment alone on its line, no
    blank line between them and the declaration) and the comment after it on
    that line (for parameters; when a line holds several declarations, the
    last one gets it); both together when it has both.  A comment line
    holding only ``//`` is a paragraph break.
    """
    if not comments:
        return types
    lines = text.split("\n")
    alone: dict[int, str] = {}  # line -> a comment that is all its line holds
    after: dict[int, tuple[int, str]] = {}  # line -> (column, a comment after something else)
    for tok in comments:
        if lines[tok.line - 1][: tok.column - 1].strip():
            after[tok.line] = (tok.column, _comment_text(tok))
        else:
            alone[tok.line] = _comment_text(tok)

    def above(line: int) -> list[str]:
        block = []
        while line - 1 - len(block) in alone:
            block.append(alone[line - 1 - len(block)])
        return block[::-1]

    out = []
    for t in types:
        params = list(t.params)
        decls = [(i, p) for i, p in enumerate(params) if isinstance(p, ast.ParamDecl)]
        last_on_line = {p.loc.line: p.loc.column for _, p in decls}
        for i, p in decls:
            doc = above(p.loc.line)
            trailing = after.get(p.loc.line)
            if trailing is not None and trailing[0] > p.loc.column and last_on_line[p.loc.line] == p.loc.column:
                doc.append(trailing[1])
            if doc:
                params[i] = attrs.evolve(p, doc=_paragraphs(doc))
        out.append(attrs.evolve(t, params=tuple(params), doc=_paragraphs(above(t.loc.line))))
    return out
