"""Start-up: the methods attrs writes for ibfabric's classes, compiled once, not in every process.

attrs writes the source of each class's ``__init__``, ``__repr__``,
``__eq__``... when the class is defined and compiles it there, every time:
about 0.3 ms a class, 20-27 ms of a one-switch run's whole process for the
65 classes it defines.  :func:`install` makes attrs take the code of
ibfabric's own classes from a file in the cache directory
(:func:`ibfabric.ned_like.parsecache.cache_dir`), as Python keeps ``.pyc`` files: an
entry is found by the name attrs gives the code and its whole source, and
compiling the same source with the same compiler gives the same code, so a
kept entry cannot change a class.  The file is named by the interpreter's
bytecode magic number and the compiler flags attrs compiles with; code
compiled in a process is added to it at exit, atomically, only if there is
any.  Classes of other packages (third-party plugins, a user's own) are
compiled by attrs as always; with no cache directory (``IBFABRIC_CACHE_DIR=``)
nothing changes.

The replaced function is attrs' private ``attr._make._compile_and_eval``;
when the attrs at hand has no such function, or one with other parameters,
:func:`install` does nothing.
"""

from __future__ import annotations

import os
from types import CodeType

from ibfabric._cachedir import cache_dir, read_marshal, write_marshal

__all__ = ["install"]

#: Entries the file keeps (ibfabric has about 150 attrs classes; every edit of one adds an entry,
#: and reading the file costs about 12 us an entry): past it, a save keeps what its own process
#: used and the entries written last.
MAX_ENTRIES = 400

_KEEP_PREFIX = "<attrs generated "
_KEEP_PACKAGE = " ibfabric."

_kept: dict | None = None  # (file name, source) -> code: the file's, and what this process compiled
_new: dict = {}  # what this process compiled
_used: set = set()  # keys this process looked up
_path: str | None = None
_flags = 0
#: Lookups this process served from the file, and sources it compiled (tests read them).
stats = {"kept": 0, "compiled": 0}


def install() -> None:
    """Make attrs take the code of ibfabric's classes from the cache (idempotent)."""
    global _flags
    try:
        import attr._make as make
    except ImportError:  # pragma: no cover - attrs is a dependency
        return
    original = getattr(make, "_compile_and_eval", None)
    if original is None or getattr(original, "_ibfabric_cached", False):
        return
    code = getattr(original, "__code__", None)
    if code is None or code.co_varnames[:4] != ("script", "globs", "locs", "filename"):
        return
    from ibfabric._cachedir import future_flags

    # compile() inside attrs inherits the __future__ flags of attrs' module: give the same ones
    _flags = code.co_flags & future_flags()

    def _compile_and_eval(script, globs, locs=None, filename=""):
        if filename.startswith(_KEEP_PREFIX) and _KEEP_PACKAGE in filename:
            if _kept is None:
                _load()
            if _path is not None:
                eval(_code(script, filename), globs, locs)
                return
        original(script, globs, locs, filename)  # another package's class, or no cache directory

    _compile_and_eval._ibfabric_cached = True
    _compile_and_eval.__wrapped__ = original
    make._compile_and_eval = _compile_and_eval


def _code(script: str, filename: str):
    # a hashable class's __hash__ mixes in hash() of a string, which differs from process to
    # process (PYTHONHASHSEED): the source is kept with a stand-in, put back in the code here
    salt = hash(_KEEP_PREFIX + "hash" + filename[filename.find(" ", len(_KEEP_PREFIX)):])
    mark = f"        {salt},\n"
    if mark in script:
        key = (filename, script.replace(mark, f"        {_SALT},\n"))
    else:
        key, salt = (filename, script), None
    _used.add(key)
    code = _kept.get(key)
    if type(code) is CodeType:
        stats["kept"] += 1
    else:
        code = compile(key[1], filename, "exec", flags=_flags, dont_inherit=True)
        stats["compiled"] += 1
        if not _new:
            import atexit

            atexit.register(save)
        _new[key] = _kept[key] = code
    return code if salt is None else _swap(code, salt)


#: Stands for the salt of a kept __hash__ (an int no generated source otherwise holds).
_SALT = 0x1BFAB_5A17_0000_0000_0001


def _swap(c, salt: int):
    """*c* (a code object or constant) with the stand-in ``_SALT`` replaced by *salt*."""
    if type(c) is int:
        return salt if c == _SALT else c
    if type(c) is tuple:
        return tuple(_swap(x, salt) for x in c)
    if type(c) is CodeType:
        return c.replace(co_consts=tuple(_swap(x, salt) for x in c.co_consts))
    return c


def _file() -> str | None:
    from importlib.util import MAGIC_NUMBER

    base = cache_dir()
    if base is None:
        return None
    return os.path.join(base, f"attrs-code-{MAGIC_NUMBER.hex()}-{_flags:x}.marshal")


def _load() -> dict:
    global _kept, _path
    _path = _file()
    _kept = read_marshal(_path) if _path is not None else {}
    return _kept


def save() -> None:
    """Add what this process compiled to the file (at exit; errors are ignored: it is only a cache)."""
    if not _new or _path is None:
        return
    try:
        merged = read_marshal(_path)  # as other processes left it
        for key in _new:
            merged.pop(key, None)
        merged.update(_new)  # (a dict keeps the order of writing: the newest last)
        if len(merged) > MAX_ENTRIES:
            keep = {k for k in merged if k in _used}
            keep.update([k for k in reversed(merged) if k not in _used][: max(0, MAX_ENTRIES - len(keep))])
            merged = {k: v for k, v in merged.items() if k in keep}
        write_marshal(_path, merged)
        _new.clear()
    except Exception:
        pass
