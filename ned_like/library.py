"""The type library: every declared type by qualified name, and name resolution.

A type's qualified name is its name prefixed by the package of its file
(``ibfabric.components.Switch``).  A name used inside a file is resolved in
this order:

1. a dotted name is a qualified name (``ibfabric.components.Link``);
2. a type of the file's own package (from any file of that package);
3. an explicitly imported type (``import a.b.Type;``);
4. a type of a wildcard-imported package (``import a.b.*;``; two packages
   offering the name is an error);
5. a built-in type of ``ibfabric.components`` (visible without import);
6. a type of the default package (a file without ``package``).

A library can also know *search directories*: when a name does not resolve,
the ``.ned`` files there are looked at and the file that declares the missing
type is added (this is how :func:`~ibfabric.ned_like.load_network` finds the
files a topology imports).
"""

from __future__ import annotations

import importlib.resources
import os
import re
from collections.abc import Iterator
from pathlib import Path

import attrs

from ibfabric.errors import did_you_mean, utf8_error_at
from ibfabric.ned_like import ast
from ibfabric.ned_like.errors import NedError
from ibfabric.ned_like.model import Location
from ibfabric.ned_like.parser import parse

__all__ = ["BUILTIN_PACKAGE", "EffectiveType", "ParamSpec", "TypeLibrary", "read_source"]

BUILTIN_PACKAGE = "ibfabric.components"

_FAMILY = {
    "simple": "simple",
    "module": "compound",
    "network": "compound",
    "channel": "channel",
    "moduleinterface": "moduleinterface",
    "channelinterface": "channelinterface",
}


def read_source(path: str | os.PathLike) -> str:
    """The text of the ``.ned`` file at *path*, which must be UTF-8.

    Raises
    ------
    NedError
        ``file:line:col: not UTF-8 text (byte 0xff)`` at the first byte that
        is not UTF-8.
    OSError
        If the file cannot be read.
    """
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line, column, byte = utf8_error_at(data, e)
        raise NedError(
            f"not UTF-8 text (byte 0x{byte:02x}); .ned files must be UTF-8", Location(str(path), line, column)
        ) from None


@attrs.frozen
class ParamSpec:
    """A parameter of an effective type: its declaration and its default.

    ``default`` is the value expression of the most derived type that gives
    one (None if there is none); ``default_loc`` where it is written.
    """

    decl: ast.ParamDecl
    default: ast.Expr | None
    is_default: bool
    default_loc: Location | None

    @property
    def name(self) -> str:
        """The parameter's name."""
        return self.decl.name


@attrs.frozen
class EffectiveType:
    """A type with everything it inherits through ``extends`` merged in.

    ``submodules``, ``connections`` and ``deep`` (the deep assignments of the
    parameters block) pair each item with the declaration it comes from,
    whose package and imports resolve the names it uses.
    """

    decl: ast.TypeDecl
    params: dict[str, ParamSpec]
    gates: dict[str, ast.GateDecl]
    submodules: tuple[tuple[ast.Submodule, ast.TypeDecl], ...]
    connections: tuple[tuple[ast.ConnItem, ast.TypeDecl], ...]
    deep: tuple[tuple[ast.ParamAssign, ast.TypeDecl], ...]
    interfaces: frozenset[str]
    allow_unconnected: bool

    @property
    def qualname(self) -> str:
        """The type's qualified name (``ibfabric.components.Switch``)."""
        return self.decl.qualname

    @property
    def kind(self) -> str:
        """The kind of declaration: ``simple``, ``module``, ``network``, ``channel``, or an interface."""
        return self.decl.kind

    @property
    def is_compound(self) -> bool:
        """Whether the type is a compound module or a network (it has submodules and connections)."""
        return self.decl.kind in ("module", "network")


class TypeLibrary:
    """Declared types by qualified name.

    Examples
    --------
    >>> lib = TypeLibrary.default()
    >>> lib.get("Switch").qualname
    'ibfabric.components.Switch'
    >>> lib.add_source("package demo; simple Node { gates: inout port[]; }", "demo.ned")
    >>> lib.get("demo.Node").kind
    'simple'
    """

    def __init__(self) -> None:
        self._types: dict[str, ast.TypeDecl] = {}
        self._files: dict[str, tuple[str, ...]] = {}
        self._search_dirs: list[Path] = []
        self._scanned: dict[Path, ast.NedFile | NedError] = {}
        self._effective: dict[str, EffectiveType] = {}

    # ------------------------------------------------------------ construction

    @classmethod
    def default(cls) -> TypeLibrary:
        """A new library with the built-in components (every ``*.ned`` of ``ibfabric.components``)."""
        return _default_library().copy()

    def copy(self) -> TypeLibrary:
        """An independent copy: adding to it leaves this library unchanged."""
        new = TypeLibrary()
        new._types = dict(self._types)
        new._files = dict(self._files)
        new._search_dirs = list(self._search_dirs)
        new._scanned = dict(self._scanned)
        new._effective = dict(self._effective)
        return new

    def add_source(self, text: str, filename: str) -> None:
        """Parse *text* and register its types under their qualified names.

        Adding a file name again replaces the types that file gave before.

        Raises
        ------
        NedError
            On a syntax error, or at the declaration of a type whose qualified
            name another file already declared.
        """
        self.add_parsed(parse(text, filename))

    def add_file(self, path: str | os.PathLike) -> None:
        """Read and add the ``.ned`` file at *path* (see :meth:`add_source`)."""
        self.add_source(read_source(path), str(path))

    def add_parsed(self, nedfile: ast.NedFile) -> None:
        """Register the types of an already parsed file (see :meth:`add_source`)."""
        old = set(self._files.get(nedfile.filename, ()))
        for t in nedfile.types:
            prev = self._types.get(t.qualname)
            if prev is not None and t.qualname not in old:
                raise NedError(f"type '{t.qualname}' is already declared at {prev.loc}", t.loc)
        for name in old:
            self._types.pop(name, None)
        for t in nedfile.types:
            self._types[t.qualname] = t
        self._files[nedfile.filename] = tuple(t.qualname for t in nedfile.types)
        self._effective.clear()

    def add_search_dir(self, path: str | os.PathLike) -> None:
        """Look in directory *path* for the ``.ned`` file of a type that does not resolve."""
        path = Path(path)
        if path not in self._search_dirs:
            self._search_dirs.append(path)

    def add_scanned(self, path: str | os.PathLike, nedfile: ast.NedFile) -> None:
        """Record that the file at *path* (in a search directory) parses to *nedfile*, so a scan does not parse it again."""
        self._scanned[Path(path)] = nedfile

    # ------------------------------------------------------------ queries

    def __contains__(self, qualname: str) -> bool:
        return qualname in self._types

    def __iter__(self) -> Iterator[ast.TypeDecl]:
        return iter(self._types.values())

    def __len__(self) -> int:
        return len(self._types)

    def parameter_names(self) -> frozenset[str]:
        """Every parameter name a type of the library declares (for "did you mean" hints)."""
        return frozenset(p.name for t in self for p in t.params if isinstance(p, ast.ParamDecl))

    def lookup(self, qualname: str) -> ast.TypeDecl | None:
        """The type with this exact qualified name, or None."""
        return self._types.get(qualname)

    def get(
        self,
        name: str,
        *,
        context: ast.TypeDecl | ast.NedFile | None = None,
        loc: Location | None = None,
    ) -> ast.TypeDecl:
        """The type *name* refers to when written in *context* (see the module docstring).

        Parameters
        ----------
        name : str
            A simple or qualified type name.
        context : TypeDecl or NedFile, optional
            Where the name is written: its package and imports are used.
            Without one, only qualified names, built-in types and default-
            package types resolve.
        loc : Location, optional
            Where to report a failure.

        Raises
        ------
        NedError
            ``unknown type 'Foo'``, or an ambiguous name.
        """
        package = context.package if context is not None else ""
        imports = context.imports if context is not None else ()
        qualname = self.resolve(name, package, imports, loc=loc)
        if qualname is None and self._load_from_search_dirs(name, package, imports):
            qualname = self.resolve(name, package, imports, loc=loc)
        if qualname is None:
            raise NedError(f"unknown type '{name}'{self._unknown_type_hint(name)}", loc)
        return self._types[qualname]

    def _unknown_type_hint(self, name: str) -> str:
        """What follows ``unknown type 'X'``: the closest known type name, and how many ``.ned`` files
        of each search directory could not be read (their errors are theirs, not this file's)."""
        known = {q for q in self._types}
        known.update(t.qualname for f in self._scanned.values() if isinstance(f, ast.NedFile) for t in f.types)
        if "." not in name:
            known = {q.rpartition(".")[2] for q in known}
        hint = did_you_mean(name, sorted(known))
        word = re.compile(rb"\b" + re.escape(name.rpartition(".")[2].encode()) + rb"\b")
        broken: dict[Path, int] = {}
        for path, parsed in self._scanned.items():
            if not isinstance(parsed, NedError):
                continue
            try:
                relevant = word.search(path.read_bytes()) is not None  # it may be the file declaring the type
            except OSError:
                relevant = False
            if relevant:
                return f"{hint} (note: {parsed})"
            broken[path.parent] = broken.get(path.parent, 0) + 1
        for directory, n in broken.items():
            hint += f" ({n} other .ned file{'s' if n > 1 else ''} in {directory} could not be read)"
        return hint

    def resolve(
        self,
        name: str,
        package: str,
        imports: tuple[ast.Import, ...],
        *,
        extra: frozenset[str] | set[str] = frozenset(),
        loc: Location | None = None,
    ) -> str | None:
        """The qualified name *name* resolves to, or None.

        *extra* names qualified types to treat as declared too (used by the
        writer to predict how names in the text it writes will resolve).
        """

        def known(q: str) -> bool:
            return q in self._types or q in extra

        if "." in name:
            return name if known(name) else None
        own = f"{package}.{name}" if package else name
        if known(own):
            return own
        for imp in imports:
            if not imp.wildcard and imp.name.rpartition(".")[2] == name and known(imp.name):
                return imp.name
        found = [f"{imp.name}.{name}" for imp in imports if imp.wildcard and known(f"{imp.name}.{name}")]
        if len(set(found)) > 1:
            raise NedError(f"ambiguous type name '{name}' (imported as {' and '.join(sorted(set(found)))})", loc)
        if found:
            return found[0]
        builtin = f"{BUILTIN_PACKAGE}.{name}"
        if known(builtin):
            return builtin
        if known(name):
            return name
        return None

    def add_package_from_search_dirs(self, package: str, *, exclude: str | os.PathLike | None = None) -> None:
        """Add every file of the search directories that declares *package* (not the default package).

        Types of a file's own package are visible without import, so they must
        be known before names are resolved (they come before the built-ins).
        Files that do not parse are skipped here; they are mentioned if a name
        later fails to resolve.
        """
        if not package:
            return
        skip = Path(exclude).resolve() if exclude is not None else None
        for path, parsed in self._scan():
            if not isinstance(parsed, ast.NedFile) or parsed.package != package or str(path) in self._files:
                continue
            if path.resolve() != skip:
                self.add_parsed(parsed)

    def _scan(self):
        """(path, parsed file or NedError) of every ``.ned`` file of the search directories."""
        for directory in self._search_dirs:
            for path in sorted(directory.glob("*.ned")):
                if path not in self._scanned:
                    try:
                        self._scanned[path] = parse(read_source(path), str(path))
                    except NedError as e:  # kept: named if a type then fails to resolve
                        self._scanned[path] = e
                    except OSError as e:  # a directory called x.ned, no permission
                        self._scanned[path] = NedError(f"cannot read: {e.strerror or e}", Location(str(path), 1, 1))
                yield path, self._scanned[path]

    def _load_from_search_dirs(self, name: str, package: str, imports) -> bool:
        """Add the file of a search directory that declares *name*; True if one was added."""
        if not self._search_dirs:
            return False
        candidates = {name} if "." in name else {
            f"{package}.{name}" if package else name,
            f"{BUILTIN_PACKAGE}.{name}",
            name,
            *(imp.name for imp in imports if not imp.wildcard and imp.name.rpartition(".")[2] == name),
            *(f"{imp.name}.{name}" for imp in imports if imp.wildcard),
        }
        for path, parsed in list(self._scan()):
            if str(path) in self._files or not isinstance(parsed, ast.NedFile):
                continue
            if candidates & {t.qualname for t in parsed.types}:
                self.add_parsed(parsed)
                return True
        return False

    # ------------------------------------------------------------ effective types

    def effective(self, qualname: str) -> EffectiveType:
        """The type *qualname* with its base types (``extends``) merged in.

        Chains of ``extends`` of any length are merged without recursion
        (bases first, each one's effective type kept for reuse).

        Raises
        ------
        NedError
            If a base type is unknown or of another kind, on an ``extends``
            cycle (named: ``type 'A' extends itself (A -> B -> A)``), or if a
            derived type redeclares a parameter or gate.
        """
        eff = self._effective.get(qualname)
        if eff is not None:
            return eff
        done: dict[str, EffectiveType] = {}  # this walk's results (a file loaded meanwhile clears the cache)
        path = [self._types[qualname]]  # the chain from the requested type to the one being merged
        todo = [list(reversed(self._bases(path[0])))]  # per type on the path: bases still to merge
        while path:
            if todo[-1]:
                base = todo[-1].pop()
                known = done.get(base.qualname) or self._effective.get(base.qualname)
                if known is not None:
                    done[base.qualname] = known
                    continue
                names = [d.qualname for d in path]
                if base.qualname in names:
                    cycle = names[names.index(base.qualname):] + [base.qualname]
                    raise NedError(f"type '{base.qualname}' extends itself ({' -> '.join(cycle)})", base.loc)
                path.append(base)
                todo.append(list(reversed(self._bases(base))))
                continue
            decl = path.pop()
            todo.pop()
            eff = self._merge(decl, done.__getitem__)
            done[decl.qualname] = eff
            self._effective[decl.qualname] = eff
        return done[qualname]

    def _bases(self, decl: ast.TypeDecl) -> list[ast.TypeDecl]:
        """The types *decl* extends and the interfaces it is ``like``, checked for their kind."""
        out = []
        for base_name in decl.extends:
            base = self.get(base_name.name, context=decl, loc=base_name.loc)
            if _FAMILY[base.kind] != _FAMILY[decl.kind]:
                raise NedError(f"a {decl.kind} cannot extend {base.kind} '{base.qualname}'", base_name.loc)
            out.append(base)
        for like in decl.likes:
            iface = self.get(like.name, context=decl, loc=like.loc)
            expected = "moduleinterface" if decl.is_module else "channelinterface"
            if iface.kind != expected:
                raise NedError(f"'{iface.qualname}' is not a {expected}", like.loc)
            out.append(iface)
        return out

    def _merge(self, decl: ast.TypeDecl, eff_of) -> EffectiveType:
        """The effective type of *decl*, given ``eff_of(qualname)`` for its bases."""
        params: dict[str, ParamSpec] = {}
        gates: dict[str, ast.GateDecl] = {}
        submodules: list = []
        connections: list = []
        deep: list = []
        interfaces: set[str] = set()
        allow = decl.allow_unconnected
        for base_name in decl.extends:
            base = self.get(base_name.name, context=decl, loc=base_name.loc)
            b = eff_of(base.qualname)
            params.update(b.params)
            gates.update(b.gates)
            submodules.extend(b.submodules)
            connections.extend(b.connections)
            deep.extend(b.deep)
            interfaces |= b.interfaces
            allow = allow or b.allow_unconnected
            if decl.is_interface:
                interfaces.add(base.qualname)
        for like in decl.likes:
            iface = self.get(like.name, context=decl, loc=like.loc)
            interfaces.add(iface.qualname)
            interfaces |= eff_of(iface.qualname).interfaces
        for p in decl.params:
            if isinstance(p, ast.ParamDecl):
                if p.name in params:
                    raise NedError(f"parameter '{p.name}' is already declared in a base type", p.loc)
                params[p.name] = ParamSpec(p, p.value, p.is_default, p.value.loc if p.value is not None else None)
            elif p.is_deep:
                deep.append((p, decl))
            else:
                if p.pattern not in params:
                    raise NedError(f"unknown parameter '{p.pattern}' of {decl.simple_name}"
                                   f"{did_you_mean(p.pattern, params)}", p.loc)
                spec = params[p.pattern]
                params[p.pattern] = ParamSpec(spec.decl, p.value, p.is_default, p.loc)
        for g in decl.gates:
            if g.name in gates:
                raise NedError(f"gate '{g.name}' is already declared in a base type", g.loc)
            gates[g.name] = g
        submodules.extend((s, decl) for s in decl.submodules)
        names = set()
        for s, _ in submodules:
            if s.name in names:
                raise NedError(f"duplicate submodule '{s.name}' (one is inherited)", s.loc)
            names.add(s.name)
        connections.extend((c, decl) for c in decl.connections)
        return EffectiveType(
            decl=decl, params=params, gates=gates, submodules=tuple(submodules),
            connections=tuple(connections), deep=tuple(deep), interfaces=frozenset(interfaces),
            allow_unconnected=allow,
        )

    def check_implements(self, qualname: str, interface: str, loc: Location) -> None:
        """Check that type *qualname* implements *interface*.

        A type implements an interface it declares with ``like`` (directly,
        through a base type, or through an interface that extends it), and
        then must have the interface's gates (same name, kind and vector-ness)
        and parameters (same name and type).

        Raises
        ------
        NedError
            ``type 'Foo' does not implement 'IHost'`` at *loc*.
        """
        eff = self.effective(qualname)
        short_t, short_i = qualname.rpartition(".")[2], interface.rpartition(".")[2]
        if interface not in eff.interfaces:
            raise NedError(f"type '{short_t}' does not implement '{short_i}'", loc)
        iface = self.effective(interface)
        for g in iface.gates.values():
            mine = eff.gates.get(g.name)
            if mine is None or mine.kind != g.kind or mine.vector != g.vector:
                what = f"{g.kind} gate{' vector' if g.vector else ''} '{g.name}'"
                raise NedError(f"type '{short_t}' does not implement '{short_i}': it needs {what}", loc)
        for p in iface.params.values():
            mine = eff.params.get(p.name)
            if mine is None or mine.decl.type != p.decl.type:
                raise NedError(
                    f"type '{short_t}' does not implement '{short_i}': it needs {p.decl.type} parameter '{p.name}'",
                    loc,
                )


_DEFAULT: TypeLibrary | None = None


def _default_library() -> TypeLibrary:
    global _DEFAULT
    if _DEFAULT is None:
        lib = TypeLibrary()
        root = importlib.resources.files(BUILTIN_PACKAGE)
        for entry in sorted(root.iterdir(), key=lambda e: e.name):
            if entry.name.endswith(".ned"):
                lib.add_source(entry.read_text(encoding="utf-8"), f"{BUILTIN_PACKAGE}/{entry.name}")
        _DEFAULT = lib
    return _DEFAULT
