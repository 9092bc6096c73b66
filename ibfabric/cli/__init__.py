"""The ``ibfabric`` command line: a thin layer over the library.

Each command lives in its own module with two functions,
``add_parser(subparsers)`` and ``run(args) -> int``.  Library errors become
one-line messages here, at the boundary, with exit status 2; nothing a user
can get wrong prints a traceback.  Warnings of the library
(:class:`ibfabric.checks.IbfabricWarning`) print as one line each,
``ibfabric: warning: ...``, on stderr, as they are given.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import re
import sys
import warnings
from collections.abc import Iterator, Sequence

from ibfabric.errors import DeadlockError, IbfabricError, did_you_mean
from ibfabric.plugins.registry import one_line

__all__ = ["main", "COMMANDS", "add_huge_pages"]

#: Command modules, in the order ``ibfabric --help`` lists them.
COMMANDS = ["run", "sweep", "saturation", "routes", "plugins", "configs", "topo", "qos", "results", "plot"]


#: argparse's message for a value outside ``choices`` (quoted choices from Python 3.12.8 on)
_INVALID_CHOICE = re.compile(r"invalid choice: '(?P<value>.*)'(?P<list> \(choose from (?P<choices>.*)\))$")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, status 2, like every other user error
        m = _INVALID_CHOICE.search(message)
        if m is not None:  # the same "did you mean" as every other unknown name
            choices = [c.strip().strip("'") for c in m.group("choices").split(",")]
            hint = did_you_mean(m.group("value"), choices)
            message = message[: m.start("list")] + hint + message[m.start("list") :]
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ibfabric", description="InfiniBand fabric simulator")
    parser.add_argument("--version", action="version", version=f"ibfabric {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        try:
            mod = importlib.import_module(f"ibfabric.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"ibfabric.cli.{name}":
                continue  # command not part of this build
            raise
        p = mod.add_parser(sub)
        p.set_defaults(_run=mod.run)
    return parser


def _version() -> str:
    from ibfabric import __version__

    return __version__


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    if getattr(args, "huge_pages", False):
        _huge_pages(from_python=argv is not None)
    try:
        with _warnings_as_lines():
            return int(args._run(args) or 0)
    except DeadlockError as exc:
        print(f"ibfabric: deadlock: {one_line(exc)}", file=sys.stderr)
        return 1
    except IbfabricError as exc:
        print(f"ibfabric: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"ibfabric: error: {exc.filename or exc}: no such file", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ibfabric: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`ibfabric routes FILE | head`): stop quietly, as Unix tools do;
        # stdout goes to /dev/null so that flushing it at exit raises nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def add_huge_pages(p: argparse.ArgumentParser) -> None:
    """The ``--huge-pages`` option of a command that runs simulations."""
    p.add_argument("--huge-pages", action="store_true",
                   help="run on transparent huge pages (glibc's allocator, restarted with PYTHONMALLOC=malloc and "
                        "GLIBC_TUNABLES=glibc.malloc.hugetlb=1): faster on big fabrics, same results")


def _huge_pages(from_python: bool) -> None:
    """Start this command again with the huge-page settings (``ibfabric._hugepages``), or say why not."""
    from ibfabric import _hugepages

    if _hugepages.active():
        print("ibfabric: on transparent huge pages (PYTHONMALLOC=malloc, GLIBC_TUNABLES=glibc.malloc.hugetlb=1)",
              file=sys.stderr)
        return
    why = _hugepages.unavailable()
    if why is None and from_python:
        why = ("main() was called from Python, whose process cannot be restarted (set PYTHONMALLOC=malloc and "
               "GLIBC_TUNABLES=glibc.malloc.hugetlb=1 before Python starts)")
    if why is None:
        why = _hugepages.restart()  # (returns only if it could not)
    print(f"ibfabric: warning: --huge-pages: {why}; running without them", file=sys.stderr)


@contextlib.contextmanager
def _warnings_as_lines() -> Iterator[None]:
    """Print every IbfabricWarning as ``ibfabric: warning: message`` (other warnings as Python does)."""
    from ibfabric.checks import IbfabricWarning

    with warnings.catch_warnings():
        warnings.simplefilter("always", IbfabricWarning)  # a simulation gives each message once
        show = warnings.showwarning

        def showwarning(message, category, filename, lineno, file=None, line=None):
            if issubclass(category, IbfabricWarning):
                print(f"ibfabric: warning: {one_line(message)}", file=sys.stderr)
            else:
                show(message, category, filename, lineno, file, line)

        warnings.showwarning = showwarning
        yield


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
