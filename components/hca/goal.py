"""GOAL schedules: reading and writing the text format of LogGOPSim (Hoefler et al.).

The format, as LogGOPSim's ``txt2bin`` reads it and its Schedgen writes it::

    num_ranks 2

    rank 0 {
    l1: send 8b to 1 tag 0
    l2: calc 100 cpu 0
    l2 requires l1
    }

    rank 1 {
    l1: recv 8b from 0 tag 0      // -1 as source or tag: any
    }

Every statement inside a rank block ends with a new line; what ``txt2bin``
takes on one line (``num_ranks 2 rank 0 {``, ``} rank 1 {``) is taken too.
A statement is an operation (``send SIZEb to R``, ``recv SIZEb
from R``, each with optional ``tag T``, ``cpu C`` and ``nic N`` in that
order; ``calc T`` with optional ``cpu C``), with an optional ``label:`` in
front, or a dependency ``lA requires lB`` (``lA`` starts once ``lB`` has
completed) or ``lA irequires lB`` (once ``lB`` has started).  Labels are
per rank; comments are ``// ...`` and ``/* ... */``; ``tag`` defaults to 0.
A calc's time is in nanoseconds (LogGOPSim's time unit).  Unlike
``txt2bin``, a dependency may name a label defined further down.

:func:`parse_goal` reads the text with a lark LALR grammar into a checked
:class:`~ibfabric.components.hca.schedule.Schedule`; every error is one
line starting ``file:line:col:``.  :func:`to_goal` writes a schedule back;
``parse_goal(to_goal(s))`` equals ``s`` when every operation has a label
(a repetition's ``phase`` is not part of the format).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from .schedule import Op, Schedule, ScheduleError

__all__ = ["GRAMMAR", "parse_goal", "read_goal", "to_goal"]

GRAMMAR = r"""
start: _NL* (_item _NL*)*
_item: num_ranks | rank
num_ranks: "num_ranks" INT
rank: "rank" INT "{" _NL* (_stmt _NL+)* "}"
_stmt: op | requires | irequires
op: (LABEL ":")? (send | recv | calc)
send: "send" INT "b" "to" INT tag? cpu? nic?
recv: "recv" INT "b" "from" SINT tag? cpu? nic?
calc: "calc" INT cpu?
tag: "tag" SINT
cpu: "cpu" INT
nic: "nic" INT
requires: LABEL "requires" LABEL
irequires: LABEL "irequires" LABEL

LABEL: /[a-zA-Z][a-zA-Z0-9_]*/
INT: /[0-9]+/
SINT: /-1|[0-9]+/
_NL: /(\r?\n)/
COMMENT: /\/\/[^\n]*/
BLOCK: /\/\*(.|\n)*?\*\//
%ignore /[ \t]+/
%ignore COMMENT
%ignore BLOCK
"""

_NAMES = {
    "INT": "a number", "SINT": "a number (or -1)", "LABEL": "a label", "_NL": "a new line", "$END": "end of file",
    "COLON": "':'", "LBRACE": "'{'", "RBRACE": "'}'",
}


@functools.lru_cache(maxsize=1)
def _lark():
    import lark

    return lark.Lark(GRAMMAR, parser="lalr", propagate_positions=True, maybe_placeholders=False)


def _expected(names) -> str:
    import lark

    terminals = {t.name: t for t in _lark().terminals}
    words = set()
    for n in names:
        if n in _NAMES:
            words.add(_NAMES[n])
        elif n in terminals and isinstance(terminals[n].pattern, lark.lexer.PatternStr):
            words.add(f"'{terminals[n].pattern.value}'")
        else:
            words.add(n.lower())
    out = sorted(words, key=lambda w: (not w.startswith("'"), w))
    if not out:
        return "nothing"
    return out[0] if len(out) == 1 else ", ".join(out[:-1]) + " or " + out[-1]


def _syntax_error(e, text: str, filename: str) -> ScheduleError:
    import lark

    line, col = max(getattr(e, "line", 1) or 1, 1), max(getattr(e, "column", 1) or 1, 1)
    if isinstance(e, lark.exceptions.UnexpectedEOF) or (
            isinstance(e, lark.exceptions.UnexpectedToken) and e.token.type == "$END"):
        line = text.count("\n") + 1
        col = len(text) - (text.rfind("\n") + 1) + 1
        msg = f"unexpected end of file, expected {_expected(getattr(e, 'expected', ()) or ())}"
    elif isinstance(e, lark.exceptions.UnexpectedToken):
        tok = e.token
        found = "a new line" if tok.type == "_NL" else f"'{tok.value[:24]}'"
        msg = f"expected {_expected(e.accepts or e.expected)} but found {found}"
    elif isinstance(e, lark.exceptions.UnexpectedCharacters):
        msg = f"unexpected character {e.char!r}"
        if e.allowed:
            msg += f", expected {_expected(e.allowed)}"
    else:  # pragma: no cover - lark raises only the three above
        msg = str(e).splitlines()[0]
    return ScheduleError(f"{filename}:{line}:{col}: {msg}")


def parse_goal(text: str, filename: str = "<string>") -> Schedule:
    """Parse GOAL text into a checked :class:`~ibfabric.components.hca.schedule.Schedule`.

    Parameters
    ----------
    text : str
        The schedule.
    filename : str
        The name used in locations and error messages.

    Raises
    ------
    ScheduleError
        ``file:line:col: ...``: a syntax error (what was expected there), a
        missing or repeated ``num_ranks``, a rank block out of range or
        repeated, a label defined twice or never, and what
        :meth:`Schedule.check <ibfabric.components.hca.schedule.Schedule.check>`
        finds (cycles, unmatched sends and receives).

    Examples
    --------
    >>> s = parse_goal("num_ranks 2\\nrank 0 {\\nl1: send 8b to 1 tag 3\\n}\\nrank 1 {\\nrecv 8b from 0 tag 3\\n}\\n")
    >>> s.ranks[0][0].describe(), s.ranks[1][0].kind
    ('send 8b to 1 tag 3', 'recv')
    """
    import lark

    try:
        tree = _lark().parse(text)
    except lark.exceptions.UnexpectedInput as e:
        raise _syntax_error(e, text, filename) from None
    num_ranks = None
    blocks: dict[int, list] = {}
    for item in tree.children:
        where = f"{filename}:{item.meta.line}:{item.meta.column}"
        if item.data == "num_ranks":
            if num_ranks is not None:
                raise ScheduleError(f"{where}: num_ranks is given twice")
            num_ranks = int(item.children[0])
            if num_ranks < 1:
                raise ScheduleError(f"{where}: num_ranks must be at least 1 (got {num_ranks})")
        else:
            if num_ranks is None:
                raise ScheduleError(f"{where}: a rank block before num_ranks (the file must start with"
                                    f" 'num_ranks N')")
            r = int(item.children[0])
            if r >= num_ranks:
                raise ScheduleError(f"{where}: rank {r} is out of range (num_ranks is {num_ranks})")
            if r in blocks:
                raise ScheduleError(f"{where}: rank {r} has a second block")
            blocks[r] = item.children[1:]
    if num_ranks is None:
        raise ScheduleError(f"{filename}:1:1: no 'num_ranks N' line: not a GOAL schedule")
    ranks = tuple(_rank(r, blocks.get(r, ()), filename) for r in range(num_ranks))
    name = Path(filename).stem if filename and not filename.startswith("<") else ""
    return Schedule(num_ranks, ranks, name, filename).check()


def _rank(r: int, stmts, filename: str) -> tuple[Op, ...]:
    from ibfabric.errors import did_you_mean

    ops: list[dict] = []
    labels: dict[str, int] = {}
    deps = []
    for st in stmts:
        where = f"{filename}:{st.meta.line}:{st.meta.column}"
        if st.data != "op":
            deps.append((st.data, str(st.children[0]), st.children[1], where))
            continue
        label = ""
        kids = st.children
        if len(kids) == 2:
            label = str(kids[0])
            if label in labels:
                first = ops[labels[label]]["location"]
                raise ScheduleError(f"{where}: rank {r}: label '{label}' is defined twice (first at {first})")
            labels[label] = len(ops)
        body = kids[-1]
        fields = {"kind": str(body.data), "label": label, "location": where, "size": int(body.children[0]),
                  "requires": [], "irequires": []}
        rest = body.children[1:]
        if body.data != "calc":
            fields["peer"] = int(rest[0])
            rest = rest[1:]
        for opt in rest:
            fields[opt.data] = int(opt.children[0])
        ops.append(fields)
    for kind, a, b, where in deps:
        for lab, tok in ((a, None), (str(b), b)):
            if lab not in labels:
                col = f"{filename}:{tok.line}:{tok.column}" if tok is not None else where
                raise ScheduleError(f"{col}: rank {r}: label '{lab}' is not defined{did_you_mean(lab, labels)}")
        if labels[a] == labels[str(b)]:
            raise ScheduleError(f"{where}: rank {r}: {a} {kind} itself")
        ops[labels[a]][kind].append(labels[str(b)])
    return tuple(Op(**{**f, "requires": tuple(sorted(set(f["requires"]))),
                        "irequires": tuple(sorted(set(f["irequires"])))}) for f in ops)


def read_goal(path: str | os.PathLike) -> Schedule:
    """Read a GOAL file (:func:`parse_goal`); a file that cannot be read is a one-line ScheduleError."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ScheduleError(f"{path}: cannot read the schedule: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        from ibfabric.errors import utf8_error_at

        line, col, byte = utf8_error_at(data, exc)
        raise ScheduleError(f"{path}:{line}:{col}: byte 0x{byte:02x} is not UTF-8 text") from None
    return parse_goal(text, str(path))


def to_goal(schedule: Schedule) -> str:
    """The schedule as GOAL text, labels as they are (an unlabelled operation gets ``oN``, N its index
    from 1, unless that label is taken), dependencies after the operations of each rank."""
    out = [f"num_ranks {schedule.num_ranks}", ""]
    for r, prog in enumerate(schedule.ranks):
        out.append(f"rank {r} {{")
        taken = {op.label for op in prog}
        names = []
        for i, op in enumerate(prog):
            name = op.label
            if not name:
                name = f"o{i + 1}"
                while name in taken:
                    name += "_"
                taken.add(name)
            names.append(name)
            out.append(f"{name}: {op.describe()}")
        for i, op in enumerate(prog):
            out.extend(f"{names[i]} requires {names[d]}" for d in op.requires)
            out.extend(f"{names[i]} irequires {names[d]}" for d in op.irequires)
        out.append("}")
        out.append("")
    return "\n".join(out)
