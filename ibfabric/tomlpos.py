"""Where keys and values are written in a TOML document, for one-line ``file:line:col: message`` errors.

:mod:`tomllib` gives a document's data but not where each key was written.
:class:`Locator` finds that in the text, so a check on the data can point at
the key or value the user wrote; :func:`toml_error` turns tomllib's own
syntax error into the same one-line form.  Every TOML reader of ibfabric
(experiment files, ...) can use them::

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise toml_error(exc, text, filename) from None
    loc = Locator(text, filename)
    if not isinstance(data["experiment"]["repeat"], int):
        raise ConfigError(f"{loc.at(('experiment', 'repeat'), value=True)}: 'repeat' must be an integer")

Examples
--------
>>> loc = Locator('[experiment]\\nname = "demo"\\ntopology = { generator = "mesh" }\\n', "exp.toml")
>>> loc.at(("experiment", "name")), loc.at(("experiment", "name"), value=True)
('exp.toml:2:1', 'exp.toml:2:8')
>>> loc.at(("experiment", "topology", "generator"), value=True)
'exp.toml:3:26'
>>> loc.at(("experiment", "missing"))
'exp.toml:1:1'
"""

from __future__ import annotations

import json
import os
import re
import tomllib

from ibfabric.errors import ConfigError

__all__ = ["MAX_FILE_BYTES", "Locator", "load_only", "parse", "read_file", "toml_error"]

#: The largest TOML input ibfabric reads (experiment, scenario and configuration files): far above any
#: real one, and what keeps ``config = "/dev/zero"`` from filling the memory.
MAX_FILE_BYTES = 16 * 1024 * 1024

_STRINGS = re.compile(r""""(?:\\.|[^"\\])*"|'[^']*'""")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_HEADER_END = re.compile(r"\][ \t]*(#.*)?$")
_ARRAY_HEADER_END = re.compile(r"\]\][ \t]*(#.*)?$")
_TOMLLIB_POSITION = re.compile(r"(.*) \(at line (\d+), column (\d+)\)", re.S)


class Locator:
    """Finds where a key (a path of table names and keys) is written in a TOML text.

    A light scan, not a parser: it tracks ``[table]`` headers and matches
    ``key =``, ``"quoted key" =`` and ``dotted.key =`` at the start of a
    line, skipping multi-line strings and arrays.  Keys of an inline table
    are looked up on their parent key's line.

    Parameters
    ----------
    text : str
        The document (already known to be valid TOML).
    filename : str
        Put in front of every location.

    Attributes
    ----------
    filename : str
    lines : list of str
        The document's lines, without line ends.
    keys : dict
        ``path -> (line, key column, value column)``, 1-based, for every
        table header and every key (and each prefix of a dotted key) at the
        start of a line; the first place wins.
    """

    def __init__(self, text: str, filename: str):
        self.filename = filename
        self.lines = [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]
        self.keys: dict[tuple, tuple[int, int, int]] = {}
        table: tuple = ()
        quote, depth = None, 0  # inside a multi-line string; open brackets of a multi-line array
        for n, line in enumerate(self.lines, 1):
            if quote is not None:
                quote = None if line.count(quote) % 2 else quote
                continue
            if depth > 0:
                depth += _depth(line)
                continue
            i = len(line) - len(line.lstrip(" \t"))
            if line.startswith("[", i):
                double = line.startswith("[[", i)
                parts, j = _key_path(line, i + 1 + double)
                if parts and (_ARRAY_HEADER_END if double else _HEADER_END).match(line, j):
                    table = tuple(parts)
                    self.keys.setdefault(table, (n, i + 1, i + 1))
                continue
            parts, j = _key_path(line, i)
            if not parts or not line.startswith("=", j):
                continue
            v = len(line) - len(line[j + 1 :].lstrip(" \t"))
            path = table + tuple(parts)
            for k in range(len(table) + 1, len(path) + 1):
                self.keys.setdefault(path[:k], (n, i + 1, v + 1))
            quote = next((q for q in ('"""', "'''") if line[v:].count(q) % 2), None)
            depth = _depth(line[v:]) if quote is None else 0

    def at(self, path: tuple, *, value: bool = False) -> str:
        """``file:line:col`` of *path*'s key (or value); else its table's, else ``1:1``."""
        found = self.keys.get(path)
        if found is None and len(path) > 1 and path[:-1] in self.keys:
            found = self._inline(path[:-1], path[-1])
        k = len(path) - 1
        while found is None and k > 0:
            found = self.keys.get(path[:k])
            k -= 1
        line, key_col, value_col = found or (1, 1, 1)
        return f"{self.filename}:{line}:{value_col if value else key_col}"

    def _inline(self, parent: tuple, key: str) -> tuple[int, int, int] | None:
        """A key of an inline table, on the line of *parent*."""
        line, _, start = self.keys[parent]
        text = self.lines[line - 1]
        names = "|".join(re.escape(q + key + q) for q in ("", '"', "'"))
        m = re.compile(rf"(?<![\w\"'-])(?:{names})[ \t]*=[ \t]*").search(text, start - 1)
        if m is None:
            return None
        return line, m.start() + 1, m.end() + 1


def read_file(path: str | os.PathLike, error: type[ConfigError] = ConfigError) -> str:
    """The UTF-8 text of the TOML file *path*, at most :data:`MAX_FILE_BYTES` of it.

    Raises *error* (one line, ``file: ...``) for a missing or unreadable file, a directory, a file
    larger than the limit (a device such as ``/dev/zero`` included) and text that is not UTF-8.
    """
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except IsADirectoryError:
        raise error(f"{path}: is a directory, not a file") from None
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror or exc})") from None
    if len(data) > MAX_FILE_BYTES:
        raise error(f"{path}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB: not a file ibfabric reads"
                    " (is it the right one?)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        from ibfabric.errors import utf8_error_at

        line, col, byte = utf8_error_at(data, exc)
        raise error(f"{path}:{line}:{col}: not UTF-8 text (byte 0x{byte:02x})") from None


def parse(text: str, filename: str, error: type[ConfigError] = ConfigError) -> dict:
    """*text* parsed as TOML; every failure is one line ``file:line:col: message`` of type *error*: a syntax
    error, values nested too deeply for the parser, an integer of more than 4300 digits."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise toml_error(exc, text, filename, error) from None
    except RecursionError:
        m = re.search(r"[\[{](?:\s*[\[{]){50}", text)
        line, col = _position(text, m.start()) if m else (1, 1)
        raise error(f"{filename}:{line}:{col}: values nested too deeply") from None
    except ValueError:  # an integer of more digits than Python converts (4300)
        m = re.search(r"\d{4300,}", text)
        line, col = _position(text, m.start()) if m else (1, 1)
        raise error(f"{filename}:{line}:{col}: a number of more than 4300 digits is out of range") from None


def _position(text: str, i: int) -> tuple[int, int]:
    return text.count("\n", 0, i) + 1, i - text.rfind("\n", 0, i)


def load_only(text: str, filename: str, key: str, kind: str, what: str) -> tuple[object, "Locator"]:
    """Parse *text*, a *kind* file (``"scenario"``, ``"config"``) that may hold the top-level *key*
    and nothing else: ``(data[key] or None, its Locator)``.  Syntax errors and other keys are
    one-line :class:`ConfigError`\\ s (``a scenario file holds [[events]] entries only``)."""
    data = parse(text, filename)
    loc = Locator(text, filename)
    for k in data:
        if k != key:
            raise ConfigError(f"{loc.at((k,))}: unknown key '{k}': a {kind} file holds {what} only")
    return data.get(key), loc


def toml_error(exc: tomllib.TOMLDecodeError, text: str, filename: str, error: type[ConfigError] = ConfigError) -> ConfigError:
    """tomllib's syntax error *exc* on *text* as ``error('file:line:col: message')``, on one line.

    Parameters
    ----------
    exc : tomllib.TOMLDecodeError
    text : str
        The document that failed; an error "at end of document" is placed
        after its last character.
    filename : str
    error : type
        The :class:`~ibfabric.errors.ConfigError` subclass to build.

    Examples
    --------
    >>> import tomllib
    >>> try:
    ...     tomllib.loads("a = = 1")
    ... except tomllib.TOMLDecodeError as exc:
    ...     print(toml_error(exc, "a = = 1", "x.toml"))
    x.toml:1:5: invalid value
    """
    msg = str(exc)
    m = _TOMLLIB_POSITION.fullmatch(msg)
    if m is not None:
        msg, where = m.group(1), f"{m.group(2)}:{m.group(3)}"
    else:
        lines = text.split("\n")
        msg, where = re.sub(r" \(at end of document\)$", "", msg), f"{len(lines)}:{len(lines[-1]) + 1}"
    msg = " ".join(msg.split())
    msg = msg[:1].lower() + msg[1:] if msg[1:2].islower() else msg
    return error(f"{filename}:{where}: {msg}")


def _depth(text: str) -> int:
    """Brackets *text* opens minus those it closes, outside strings and comments."""
    code = _STRINGS.sub("", text).split("#", 1)[0]
    return code.count("[") + code.count("{") - code.count("]") - code.count("}")


def _key_path(line: str, i: int) -> tuple[list[str], int]:
    """The dotted key starting at *i* and the index after it and its trailing blanks."""
    parts: list[str] = []
    n = len(line)
    while True:
        while i < n and line[i] in " \t":
            i += 1
        if i >= n:
            return parts, i
        c = line[i]
        if c in "\"'":
            j = i + 1
            while j < n and line[j] != c:
                j += 2 if c == '"' and line[j] == "\\" else 1
            raw = line[i + 1 : min(j, n)]
            try:
                part = json.loads(f'"{raw}"') if c == '"' else raw
            except ValueError:
                part = raw
            i = j + 1
        else:
            m = _BARE_KEY.match(line, i)
            if m is None:
                return parts, i
            part, i = m.group(), m.end()
        parts.append(part)
        while i < n and line[i] in " \t":
            i += 1
        if i < n and line[i] == ".":
            i += 1
            continue
        return parts, i
