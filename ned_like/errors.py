"""The one exception of the NED-like language: :class:`NedError`.

Every syntax and semantic error in a ``.ned`` source (and every bad override
value) is a NedError that names the place of the offending construct, so that
``str(error)`` is a complete one-line message such as::

    topo.ned:12:7: expected ';' or '}' but found 'sw'
"""

from __future__ import annotations

import re

from ibfabric.errors import TopologyError
from ibfabric.ned_like.model import Location

__all__ = ["NedError", "one_line"]

# What str.splitlines() breaks at: a message must stay one line whatever text it quotes.
_LINE_BREAKS = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def one_line(text: str) -> str:
    """*text* with its line breaks written as escapes (``\\n``), so it prints as one line."""
    return _LINE_BREAKS.sub(lambda m: repr(m.group())[1:-1], text)


class NedError(TopologyError):
    """An error in NED-like source, at ``file:line:column``.

    Parameters
    ----------
    message : str
        What is wrong, on one line, without the location.
    location : Location, optional
        Where; without it the file is ``'<unknown>'`` and line and column 0
        (only errors that have no place in any source lack it).

    Attributes
    ----------
    file, line, column : str, int, int
        The location (1-based line and column).
    message : str
        The message without the location.
    location : Location or None
        The location as given.

    Notes
    -----
    NedError is a :class:`ibfabric.errors.TopologyError`, so the CLI reports it
    like every other user mistake: ``str(error)`` on one line (line breaks in
    quoted text, such as a file name or a property, are escaped).
    """

    def __init__(self, message: str, location: Location | None = None):
        self.message = one_line(message)
        self.location = location
        if location is None:
            self.file, self.line, self.column = "<unknown>", 0, 0
        else:
            self.file, self.line, self.column = location.file, location.line, location.column
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.location is None:
            return self.message
        return f"{one_line(self.file)}:{self.line}:{self.column}: {self.message}"

    def __reduce__(self):
        return (type(self), (self.message, self.location))
