"""Start-up: salabim's import, about 20 ms shorter, with the same salabim.

Two things salabim's module does when it is imported cost a run's process
time and give it nothing then:

- ``import urllib.request``, which brings ``http.client``, ``ssl``,
  ``socket`` and ``email`` (about 13 ms); salabim uses it only to load an
  animation image from a URL;
- ``set_environment_aliases()``: some 200 ``exec`` calls of source it
  writes (an alias on ``Environment`` for each of its classes and
  functions), each compiled in every process (about 10 ms).

:func:`install` puts a finder on ``sys.meta_path`` that acts once, when
salabim's module (``salabim.salabim``) is imported, and only while it runs:

- ``urllib.request``, unless already imported, is a stand-in module that
  imports the real one the first time anything is looked up on it (so
  salabim's ``urllib.request.urlopen(...)`` still works), and it is out of
  ``sys.modules`` when salabim's import ends: a later ``import
  urllib.request`` is the usual import;
- ``exec`` of source called from salabim's ``set_environment_aliases``
  runs code kept in a file in the cache directory
  (:func:`ibfabric._cachedir.cache_dir`), as Python keeps ``.pyc`` files: an
  entry is found by the whole source and the compiler flags, and compiling
  the same source with the same compiler gives the same code.  Every other
  ``exec`` (another caller, another thread) is the builtin's, with the same
  arguments; the builtin is back in place when salabim's import ends.

Nothing is changed when salabim is imported before ibfabric, and nothing is
cached without a cache directory (``IBFABRIC_CACHE_DIR=``).
"""

from __future__ import annotations

import builtins
import contextlib
import sys
from types import CodeType, ModuleType

from ibfabric._cachedir import cache_dir, future_flags, read_marshal, write_marshal

__all__ = ["install"]

_MODULE = "salabim.salabim"
_ALIASES = "set_environment_aliases"
#: Compiles and kept entries of the last salabim import in this process (tests read them).
stats = {"kept": 0, "compiled": 0, "deferred": False}


def install() -> None:
    """Put the one-shot finder on ``sys.meta_path`` (idempotent; nothing if salabim is imported)."""
    if _MODULE in sys.modules or any(isinstance(f, _Finder) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _Finder())


class _Finder:
    """Finds nothing itself: wraps the loader of ``salabim.salabim`` that the other finders find."""

    def find_spec(self, name, path=None, target=None):
        if name != _MODULE:
            return None
        with contextlib.suppress(ValueError):  # once: from here on the import is the usual one
            sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        run = getattr(loader, "exec_module", None)
        if run is None:
            return spec

        def exec_module(module):
            del loader.exec_module  # the loader's own method again (a reload is the usual one)
            with _Window(module):
                run(module)

        try:
            loader.exec_module = exec_module
        except (AttributeError, TypeError):  # a loader that takes no attributes: the usual import
            pass
        return spec

    def invalidate_caches(self) -> None:
        pass


class _Deferred(ModuleType):
    """``urllib.request`` until something is looked up on it: then the real module, imported."""

    def __getattr__(self, name: str):
        return getattr(_import_urllib_request(self), name)


def _import_urllib_request(stand_in):
    if sys.modules.get("urllib.request") is stand_in:
        sys.modules.pop("urllib.request", None)  # (another thread may have done it)
    import importlib

    return importlib.import_module("urllib.request")  # (the import sets urllib.request to it)


class _Window:
    """While salabim's module runs: the stand-in ``urllib.request`` and the caching ``exec``."""

    def __init__(self, module):
        self.module = module
        self.stand_in = None
        self.real_exec = builtins.exec
        self.kept: dict = {}
        self.used: dict = {}
        self.path = None
        self.caching_exec = self.exec  # (one bound method: what builtins.exec is while salabim runs)

    def __enter__(self):
        if "urllib.request" not in sys.modules:
            import urllib

            if getattr(urllib, "request", None) is None:
                self.stand_in = _Deferred("urllib.request")
                sys.modules["urllib.request"] = self.stand_in
                urllib.request = self.stand_in
        stats.update(kept=0, compiled=0, deferred=self.stand_in is not None)
        self.path = _file()
        if self.path is not None:
            self.kept = read_marshal(self.path)
            builtins.exec = self.caching_exec
        return self

    def __exit__(self, *exc):
        if builtins.exec is self.caching_exec:
            builtins.exec = self.real_exec
        if self.stand_in is not None and sys.modules.get("urllib.request") is self.stand_in:
            del sys.modules["urllib.request"]  # salabim keeps urllib (the package), whose .request it is
        if stats["compiled"] and exc[0] is None:
            write_marshal(self.path, self.used)  # all one salabim needs: what this import used
        return False

    def exec(self, source, globals=None, locals=None, **kw):
        """``exec``, as the builtin: the caller's namespaces by default (a copy of a function's
        locals, as the builtin takes), source compiled with the caller's ``__future__`` flags (not
        this module's); source from salabim's aliases compiled once.  (*globals* and *locals* may be
        given by name, as Python 3.13 allows.)"""
        caller = sys._getframe(1)
        if globals is None:
            globals = caller.f_globals
            if locals is None:
                locals = caller.f_locals
                if not isinstance(locals, dict):  # Python 3.13+: a function's write-through proxy
                    locals = dict(locals)
        code = caller.f_code
        if isinstance(source, (str, bytes)):
            flags = code.co_flags & _FUTURE
            if type(source) is str and code.co_name == _ALIASES and caller.f_globals is self.module.__dict__:
                source = self.compiled(source, flags)
            else:
                source = compile(source, "<string>", "exec", flags=flags, dont_inherit=True)
        return self.real_exec(source, globals, locals, **kw)

    def compiled(self, source: str, flags: int):
        key = (flags, source)
        code = self.kept.get(key)
        if type(code) is CodeType:
            stats["kept"] += 1
        else:
            # what exec(source) compiles: file "<string>", the caller's __future__ flags
            code = self.kept[key] = compile(source, "<string>", "exec", flags=flags, dont_inherit=True)
            stats["compiled"] += 1
        self.used[key] = code
        return code


_FUTURE = future_flags()


def _file() -> str | None:
    from importlib.util import MAGIC_NUMBER

    base = cache_dir()
    return None if base is None else f"{base}/salabim-aliases-{MAGIC_NUMBER.hex()}.marshal"
