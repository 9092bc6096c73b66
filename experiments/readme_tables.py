"""Check, or rewrite, the tables of experiments/README.md that a script prints from committed results.

A generated table follows a marker, a line of its own naming the command that prints it (run from the repository
root with this Python) and, optionally, which of its output's tables and which rows::

    <!-- table from: experiments/martinez2003_table1.py --report --only whole; table 2 -->
    <!-- table from: experiments/martinez2003_table1.py --report --only stable; rows Unif. -->

``table N`` picks the command's N-th markdown table (default 1); ``rows A, B`` keeps its header and the
rows whose first cell is A or B, in the output's order.  A marker indented (a table inside a list item) has
its table indented alike.  The marker is an HTML comment, so the rendered
README does not show it.  Without ``--write`` the script compares each table with its command's and
exits 1 if any differs (tests/test_experiments.py runs that check, so a README table cannot drift from
the committed results it quotes); ``--write`` replaces the differing tables (atomically, the rest of the
file as it was).

::

    python experiments/readme_tables.py            # check: lists the tables that differ, with a diff
    python experiments/readme_tables.py --write    # rewrite them from their commands
"""

from __future__ import annotations

import argparse
import difflib
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

HERE = Path(__file__).resolve().parent
README = HERE / "README.md"
MARKER = re.compile(r"<!-- table from: (?P<body>.*?) -->\s*$")


class MarkerError(ValueError):
    """A marker line that cannot be read, or whose table is missing; the message is file:line:col: why."""


@attrs.frozen
class Marker:
    """One generated table: its marker's line (0-based), the command and which table and rows it keeps."""

    line: int
    command: tuple[str, ...]
    table: int = 1
    rows: tuple[str, ...] | None = None
    #: the marker's indentation, which its table's lines share
    indent: str = ""


def tables(lines: Sequence[str], indent: str = "") -> list[tuple[int, int]]:
    """The markdown tables of ``lines``: (first line, line after the last) of each run of lines starting
    ``indent + "|"``."""
    out, i, start = [], 0, indent + "|"
    while i < len(lines):
        if lines[i].startswith(start):
            j = i
            while j < len(lines) and lines[j].startswith(start):
                j += 1
            out.append((i, j))
            i = j
        else:
            i += 1
    return out


def first_cell(row: str) -> str:
    return row.strip().strip("|").split("|", 1)[0].strip()


def markers(lines: Sequence[str], name: str = "README.md") -> list[Marker]:
    """Every marker of ``lines``; a marker that cannot be read, or without a table on the next line, raises."""
    out = []
    for i, text in enumerate(lines):
        if not text.lstrip().startswith("<!-- table from:"):
            continue  # a marker is a line of its own (this file's prose may quote one)
        col = text.index("<!-- table from:") + 1
        m = MARKER.search(text)
        if m is None:
            raise MarkerError(f"{name}:{i + 1}:{col}: a table marker is '<!-- table from: COMMAND[; table N]"
                              "[; rows A, B] -->' on one line")
        parts, starts, at = [], [], m.start("body")
        for raw in m["body"].split(";"):
            parts.append(raw.strip())
            starts.append(at + len(raw) - len(raw.lstrip()) + 1)
            at += len(raw) + 1
        try:
            command = tuple(shlex.split(parts[0]))
        except ValueError as exc:
            raise MarkerError(f"{name}:{i + 1}:{m.start('body') + 1}: {exc}") from None
        if not command:
            raise MarkerError(f"{name}:{i + 1}:{m.start('body') + 1}: the marker names no command")
        table, rows = 1, None
        for part, pcol in zip(parts[1:], starts[1:]):
            key, _, value = part.partition(" ")
            if key == "table" and value.strip().isdigit() and int(value) >= 1:
                table = int(value)
            elif key == "rows" and value.strip():
                rows = tuple(v.strip() for v in value.split(","))
            else:
                raise MarkerError(f"{name}:{i + 1}:{pcol}: {part!r}: expected 'table N' (N from 1) or 'rows A, B'")
        indent = text[:col - 1]
        if i + 1 >= len(lines) or not lines[i + 1].startswith(indent + "|"):
            raise MarkerError(f"{name}:{i + 2}:{col}: the table of the marker on line {i + 1} must start on the next "
                              "line, indented as the marker")
        out.append(Marker(i, command, table, rows, indent))
    return out


def pick(output: Sequence[str], marker: Marker, name: str = "README.md") -> list[str]:
    """The table of a command's output lines that ``marker`` names (its rows kept as it says)."""
    found = tables(output)
    if marker.table > len(found):
        raise MarkerError(f"{name}:{marker.line + 1}:1: {shlex.join(marker.command)} prints {len(found)} "
                          f"table(s), not {marker.table}")
    a, b = found[marker.table - 1]
    rows = list(output[a:b])
    if marker.rows is None:
        return rows
    kept = rows[:2] + [r for r in rows[2:] if first_cell(r) in marker.rows]
    missing = set(marker.rows) - {first_cell(r) for r in kept[2:]}
    if missing:
        raise MarkerError(f"{name}:{marker.line + 1}:1: no row {', '.join(sorted(missing))} in table "
                          f"{marker.table} of {shlex.join(marker.command)}")
    return kept


def run_command(command: Sequence[str], root: Path) -> list[str]:
    """A marker's command run from ``root`` with this Python: its standard output's lines."""
    proc = subprocess.run([sys.executable, *command], cwd=root, capture_output=True, text=True, check=False)
    if proc.returncode:
        raise MarkerError(f"{shlex.join(command)} exited {proc.returncode}: "
                          f"{(proc.stderr.strip().splitlines() or ['no message'])[-1]}")
    return proc.stdout.splitlines()


def regenerate(lines: Sequence[str], run: Callable[[Sequence[str]], list[str]],
               name: str = "README.md") -> tuple[list[str], list[tuple[Marker, list[str], list[str]]]]:
    """``lines`` with every generated table replaced by its command's, and the tables that differed
    (marker, README's rows, the command's).  Each distinct command runs once."""
    out, changed, cache = list(lines), [], {}
    for marker in reversed(markers(lines, name)):
        if marker.command not in cache:
            try:
                cache[marker.command] = run(marker.command)
            except MarkerError as exc:
                raise MarkerError(f"{name}:{marker.line + 1}:1: {exc}") from None
        new = [marker.indent + r for r in pick(cache[marker.command], marker, name)]
        a, b = next((a, b) for a, b in tables(lines, marker.indent) if a == marker.line + 1)
        if list(lines[a:b]) != new:
            changed.append((marker, list(lines[a:b]), new))
            out[a:b] = new
    return out, changed[::-1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--readme", type=Path, default=README, help="the file (default experiments/README.md)")
    ap.add_argument("--write", action="store_true", help="rewrite the tables that differ")
    args = ap.parse_args(argv)
    root = HERE.parent
    try:
        text = args.readme.read_text()
        lines, changed = regenerate(text.split("\n"), lambda c: run_command(c, root), args.readme.name)
    except (OSError, MarkerError) as exc:
        ap.exit(2, f"readme_tables: {exc}\n")
    for marker, old, new in changed:
        where = f"{args.readme.name}:{marker.line + 2}"
        print(f"{where}: the table of `{shlex.join(marker.command)}` differs")
        if not args.write:
            sys.stdout.writelines(difflib.unified_diff([r + "\n" for r in old], [r + "\n" for r in new],
                                                       "README", "command", n=0))
    count = len(markers(text.split("\n")))
    if args.write and changed:
        from ibfabric.results import write_atomic

        write_atomic(args.readme, "\n".join(lines))
        print(f"{len(changed)} of {count} generated tables rewritten in {args.readme}")
        return 0
    print(f"{count - len(changed)} of {count} generated tables match their commands", file=sys.stderr)
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
