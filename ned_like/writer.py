"""Writing an elaborated network back as NED-like text.

``elaborate(write_ned(net)).canonical() == net.canonical()`` for every
elaborated network (with the same library given to both calls).  The text:

* references library types (built-in ones by their simple name, others
  through ``import``) and declares the simple-module and channel types the
  library does not have (every parameter without default, gate vectors
  unsized);
* writes the network with its submodules, vectors kept as vectors
  (``sw[8]: Switch;``), and only the parameter values that differ from what
  the type's defaults give.  A value most elements of a vector share goes in
  the submodule body (``sw[8]: Switch { numPorts = 8; }``); the others are
  deep assignments in the network's parameters block (``sw[3].lid = 4;``),
  which beat body assignments;
* declares one ``module`` type per distinct structure of the compound
  submodules (named after their original type, ``Host``, ``Host_2``...);
  parameters of simple modules inside them are deep assignments of the
  network (``host[2].nic.lid = 5;``, ``host[*].nic.mtu = 4096B;`` for a value
  shared by most, after the exceptions, since the first match wins; also
  for vectors whose elements have different types);
* writes a vector whose elements have different types as
  ``<(index == 2 ? "B" : "A")> like I`` with an interface they all implement
  (one from the library, or a generated empty ``moduleinterface``);
* writes the connections one per line with explicit indices, channels with
  their non-default parameters inline.
"""

from __future__ import annotations

from collections import Counter

from ibfabric.ned_like import ast
from ibfabric.ned_like.errors import NedError
from ibfabric.ned_like.library import BUILTIN_PACKAGE, TypeLibrary
from ibfabric.ned_like.model import (
    ChannelInstance,
    Connection,
    ElaboratedNetwork,
    GateRef,
    ModuleInstance,
    Value,
)
from ibfabric.ned_like.writer_types import _WRITER, DefaultFinder, TypeInfo, collect_types, value_key

__all__ = ["write_ned"]

_INDENT = "    "


def write_ned(net: ElaboratedNetwork, *, library: TypeLibrary | None = None) -> str:
    """NED-like text that elaborates to the same network as *net*.

    Parameters
    ----------
    net : ElaboratedNetwork
    library : TypeLibrary, optional
        The types to reference rather than declare (default: the built-in
        components).  Elaborate the text with the same library.

    Returns
    -------
    str
        The text; see the module docstring for its layout.

    Raises
    ------
    NedError
        If the library declares a type of the network differently from its
        instances, or the network needs two types that cannot be named in
        one file.
    """
    return _Writer(net, library if library is not None else TypeLibrary.default()).write()


def _groups(m: ModuleInstance) -> list[tuple[str, int | None, list[ModuleInstance]]]:
    """The submodules of *m* as (name, vector size, elements), in order."""
    out: list[tuple[str, int | None, list[ModuleInstance]]] = []
    for sub in m.submodules:
        if out and out[-1][0] == sub.name:
            out[-1][2].append(sub)
        else:
            out.append((sub.name, sub.vector_size if sub.index is not None else None, [sub]))
    return out


def _by_index(texts: list[str]) -> str:
    """An expression giving ``texts[index]``: a constant, or a ``?:`` chain on ``index``."""
    if len(set(texts)) == 1:
        return texts[0]
    mode = Counter(texts).most_common(1)[0][0]
    cases: dict[str, list[int]] = {}
    for i, t in enumerate(texts):
        if t != mode:
            cases.setdefault(t, []).append(i)
    parts = []
    for text, indices in cases.items():
        runs: list[list[int]] = []
        for i in indices:
            if runs and runs[-1][1] == i - 1:
                runs[-1][1] = i
            else:
                runs.append([i, i])
        conds = [f"index == {a}" if a == b else f"index >= {a} && index <= {b}" for a, b in runs]
        parts.append(f"{' || '.join(conds)} ? {text}")
    return "(" + " : ".join(parts) + f" : {mode})"


class _Writer:
    def __init__(self, net: ElaboratedNetwork, lib: TypeLibrary):
        self.net = net
        self.lib = lib
        self.root = net.root
        self.defaults = DefaultFinder()
        self.types: dict[str, TypeInfo] = {}
        self.shape_of: dict[str, int] = {}  # compound path -> shape id
        self.shapes: list[ModuleInstance] = []  # representative instance per shape
        self.shape_keys: dict[tuple, int] = {}
        self.generated: dict[int, str] = {}  # shape id -> generated type qualname
        self.gen_likes: dict[int, list[str]] = {}
        self.interfaces: list[str] = []  # generated interfaces (qualnames)
        self.vector_like: dict[tuple[str, str], str] = {}  # (compound path or shape, name) -> interface
        self.package = ""
        self.imports: list[ast.Import] = []
        self.declared: set[str] = set()

    # ------------------------------------------------------------ planning

    def write(self) -> str:
        self.types = collect_types(self.net, self.lib)
        for m in self.root.submodules:
            if m.kind == "compound":
                self._shape(m)
        self._choose_names()
        self._plan_interfaces()
        body_params, deep_lines = self._plan_params()
        return self._render(body_params, deep_lines)

    def _element_key(self, m: ModuleInstance) -> tuple:
        if m.kind == "compound":
            return ("C", self._shape(m))
        return ("S", m.type_name)

    def _body_gates(self, m: ModuleInstance) -> dict[str, int]:
        """Gate-vector sizes of simple module *m* that its body must give."""
        info = self.types[m.type_name]
        declared = self.defaults.declared_sizes(info, dict(m.params), m.index)
        return {
            g.name: g.size for g in m.gates
            if g.size is not None and declared.get(g.name) != g.size
        }

    def _shape(self, m: ModuleInstance) -> int:
        sid = self.shape_of.get(m.path)
        if sid is not None:
            return sid
        groups = []
        for name, size, elems in _groups(m):
            groups.append((name, size, tuple(
                (self._element_key(e), tuple(sorted(self._body_gates(e).items())) if e.kind == "simple" else ())
                for e in elems
            )))
        conns = tuple(
            (self._rel(m, c.src), self._rel(m, c.dst), c.bidirectional, self._channel_key(c.channel))
            for c in m.connections
        )
        gates = tuple((g.name, g.kind, g.size) for g in m.gates)
        key = (gates, tuple(groups), conns)
        sid = self.shape_keys.get(key)
        if sid is None:
            sid = self.shape_keys[key] = len(self.shapes)
            self.shapes.append(m)
        self.shape_of[m.path] = sid
        return sid

    @staticmethod
    def _rel(m: ModuleInstance, ref: GateRef) -> str:
        """*ref* as written inside compound module *m*."""
        return str(ref)[len(m.path) + 1 :]

    def _channel_params(self, ch: ChannelInstance) -> list[tuple[str, Value]]:
        info = self.types[ch.type_name]
        needed = self.defaults.needed(info, dict(ch.params), None)
        return [(k, v) for k, v in ch.params.items() if k in needed]

    def _channel_key(self, ch: ChannelInstance | None):
        if ch is None:
            return None
        return (ch.type_name, tuple((k,) + value_key(v) for k, v in self._channel_params(ch)))

    def _choose_names(self) -> None:
        synth = [t for t in self.types.values() if t.synthesized]
        packages = {t.qualname.rpartition(".")[0] for t in synth}
        if "" in packages or not packages:
            self.package = ""
        else:
            self.package = Counter(t.qualname.rpartition(".")[0] for t in synth).most_common(1)[0][0]
        self.declared = {t.qualname for t in synth}
        net_q = self._qualify(self.root.name)
        if net_q in self.lib or net_q in self.declared:
            raise NedError(
                f"cannot write network '{self.root.name}': a type '{net_q}' already exists in the library", _WRITER
            )
        self.declared.add(net_q)
        for sid, rep in enumerate(self.shapes):
            self.generated[sid] = self._fresh(rep.type_name.rpartition(".")[2])
            self.gen_likes[sid] = []
        # Import library types of other packages when their simple name is unambiguous.
        used = {q for q, t in self.types.items() if not t.synthesized}
        simple_names = Counter(q.rpartition(".")[2] for q in used | self.declared)
        for q in sorted(used):
            pkg, _, name = q.rpartition(".")
            if pkg not in ("", BUILTIN_PACKAGE, self.package) and simple_names[name] == 1:
                self.imports.append(ast.Import(q, False, _WRITER))

    def _qualify(self, name: str) -> str:
        return f"{self.package}.{name}" if self.package else name

    def _fresh(self, base: str) -> str:
        n = 1
        while True:
            name = base if n == 1 else f"{base}_{n}"
            q = self._qualify(name)
            visible = self.lib.resolve(name, self.package, (), extra=self.declared)
            if q not in self.lib and q not in self.declared and visible is None:
                self.declared.add(q)
                return q
            n += 1

    def ref(self, qualname: str) -> str:
        """How to write *qualname* in the file so that it resolves to that type."""
        simple = qualname.rpartition(".")[2]
        try:
            found = self.lib.resolve(simple, self.package, tuple(self.imports), extra=self.declared)
        except NedError:
            found = None
        if found == qualname:
            return simple
        if "." not in qualname:
            raise NedError(f"cannot write a reference to type '{qualname}' of the default package here", _WRITER)
        return qualname

    def _decl_name(self, qualname: str) -> str:
        pkg, _, name = qualname.rpartition(".")
        return name if pkg == self.package else qualname

    # ------------------------------------------------------------ mixed vectors

    def _plan_interfaces(self) -> None:
        owners = [self.root] + self.shapes
        for owner in owners:
            for name, size, elems in _groups(owner):
                keys = [self._element_key(e) for e in elems]
                if size is None or len(set(keys)) == 1:
                    continue
                self.vector_like[(owner.path, name)] = self._common_interface(elems, keys)

    def _common_interface(self, elems: list[ModuleInstance], keys: list[tuple]) -> str:
        library_types = {e.type_name for e, k in zip(elems, keys) if k[0] == "S" and not self.types[e.type_name].synthesized}
        ours = {k for k in keys if k[0] == "C" or self.types[k[1]].synthesized}
        if library_types:
            common = None
            for q in library_types:
                ifaces = set(self.lib.effective(q).interfaces)
                common = ifaces if common is None else common & ifaces
            for iface in sorted(common or ()):
                if self.lib.lookup(iface).kind == "moduleinterface" and all(self._can_adopt(k, iface) for k in ours):
                    for k in ours:
                        self._adopt(k, iface)
                    return iface
            names = ", ".join(sorted(library_types))
            raise NedError(f"cannot write a vector of types {names}: they implement no common interface", _WRITER)
        iface = self._fresh("I" + elems[0].name[:1].upper() + elems[0].name[1:])
        self.interfaces.append(iface)
        for k in ours:
            self._adopt(k, iface)
        return iface

    def _can_adopt(self, key: tuple, iface: str) -> bool:
        eff = self.lib.effective(iface)
        if key[0] == "C":
            rep = self.shapes[key[1]]
            gates = {g.name: (g.kind, g.size is not None) for g in rep.gates}
            params: dict[str, tuple] = {}
        else:
            info = self.types[key[1]]
            gates = dict(info.gates)
            params = info.params
        ok_gates = all(gates.get(g.name) == (g.kind, g.vector) for g in eff.gates.values())
        ok_params = all(params.get(p.name, (None,))[0] == p.decl.type for p in eff.params.values())
        return ok_gates and ok_params

    def _adopt(self, key: tuple, iface: str) -> None:
        likes = self.gen_likes[key[1]] if key[0] == "C" else self.types[key[1]].likes
        if iface not in likes:
            likes.append(iface)

    # ------------------------------------------------------------ parameters

    def _plan_params(self):
        """Body assignments of the network's submodules, and its deep assignments."""
        prefix = len(self.root.path) + 1
        groups: dict[str, list[ModuleInstance]] = {}
        for m in self.net.simple_modules():
            rel = m.path[prefix:]
            key = ".".join(part.split("[")[0] + ("[*]" if "[" in part else "") for part in rel.split("."))
            groups.setdefault(key, []).append(m)
        body: dict[str, list[tuple[str, str]]] = {}
        literal: dict[str, list[tuple[str, Value]]] = {}
        wild: list[str] = []
        for key, members in groups.items():
            top = "." not in key
            needed = {m.path: self.defaults.needed(self.types[m.type_name], dict(m.params), m.index) for m in members}
            names = list(dict.fromkeys(p for m in members for p in m.params))
            for p in names:
                have = [(m, m.params[p]) for m in members if p in m.params]
                need = [m for m, _ in have if p in needed[m.path]]
                if not need:
                    continue
                counts = Counter(value_key(v) for _, v in have)
                common_key, count = counts.most_common(1)[0]
                common = next(v for _, v in have if value_key(v) == common_key)
                uniform = len({(type(v.value), v.unit) for _, v in have}) == 1
                cost_shared = 1 + len(have) - count
                in_body = top and len(have) == len(members)
                progression = _progression(have) if in_body and len(counts) > 1 and len(have) > 2 else None
                if progression is not None:
                    body.setdefault(key, []).append((p, progression))
                    continue
                if uniform and (cost_shared <= len(need) if in_body else cost_shared < len(need)):
                    exceptions = [(m, v) for m, v in have if value_key(v) != common_key]
                    if in_body:
                        body.setdefault(key, []).append((p, common.ned()))
                    else:
                        wild.append(f"{key}.{p} = {common.ned()};")
                else:
                    exceptions = [(m, m.params[p]) for m in need]
                for m, v in exceptions:
                    literal.setdefault(m.path, []).append((p, v))
        lines = []
        for m in self.net.simple_modules():
            for p, v in literal.get(m.path, ()):
                lines.append(f"{m.path[prefix:]}.{p} = {v.ned()};")
        return body, lines + wild

    # ------------------------------------------------------------ rendering

    def _render(self, body_params, deep_lines) -> str:
        out: list[str] = []
        if self.package:
            out += [f"package {self.package};", ""]
        for imp in self.imports:
            out.append(f"import {imp.name};")
        if self.imports:
            out.append("")
        for iface in self.interfaces:
            out += [f"moduleinterface {self._decl_name(iface)}", "{", "}", ""]
        for info in self.types.values():
            if info.synthesized:
                out += self._render_synth(info) + [""]
        for sid, rep in enumerate(self.shapes):
            out += self._render_compound(
                "module", self._decl_name(self.generated[sid]), rep, self.gen_likes[sid], [], {}
            ) + [""]
        out += self._render_compound("network", self.root.name, self.root, [], deep_lines, body_params)
        return "\n".join(out) + "\n"

    def _likes(self, likes: list[str]) -> str:
        return (" like " + ", ".join(self.ref(q) for q in likes)) if likes else ""

    def _render_synth(self, info: TypeInfo) -> list[str]:
        out = [f"{info.kind} {self._decl_name(info.qualname)}{self._likes(info.likes)}", "{"]
        if info.params:
            out.append(_INDENT + "parameters:")
            for name, (ptype, unit) in info.params.items():
                unit_text = f" @unit({unit})" if unit else ""
                out.append(_INDENT * 2 + f"{ptype} {name}{unit_text};")
        if info.gates:
            out.append(_INDENT + "gates:")
            for name, (kind, vector) in info.gates.items():
                out.append(_INDENT * 2 + f"{kind} {name}{'[]' if vector else ''};")
        out.append("}")
        return out

    def _render_compound(self, keyword, name, m: ModuleInstance, likes, deep_lines, body_params):
        out = [f"{keyword} {name}{self._likes(likes)}", "{"]
        if deep_lines:
            out.append(_INDENT + "parameters:")
            out += [_INDENT * 2 + line for line in deep_lines]
        if m.gates:
            out.append(_INDENT + "gates:")
            for g in m.gates:
                size = "" if g.size is None else f"[{g.size}]"
                out.append(_INDENT * 2 + f"{g.kind} {g.name}{size};")
        groups = _groups(m)
        if groups:
            out.append(_INDENT + "submodules:")
            for gname, size, elems in groups:
                key = gname + ("[*]" if size is not None else "")
                out += self._render_submodule(m, gname, size, elems, body_params.get(key, ()))
        if m.connections:
            out.append(_INDENT + "connections allowunconnected:")
            out += [_INDENT * 2 + self._render_connection(m, c) for c in m.connections]
        out.append("}")
        return out

    def _type_text(self, e: ModuleInstance) -> str:
        if e.kind == "compound":
            return self.generated[self.shape_of[e.path]]
        return e.type_name

    def _render_submodule(self, m, name, size, elems, params) -> list[str]:
        head = name if size is None else f"{name}[{size}]"
        iface = self.vector_like.get((m.path, name))
        if iface is None:
            type_text = self.ref(self._type_text(elems[0]))
        else:
            names = [f'"{self.ref(self._type_text(e))}"' for e in elems]
            type_text = f"<{_by_index(names)}> like {self.ref(iface)}"
        body = [f"{p} = {text};" for p, text in params]
        sizes = [self._body_gates(e) if e.kind == "simple" else {} for e in elems]
        gate_names = list(dict.fromkeys(g for s in sizes for g in s))
        gate_lines = []
        for g in gate_names:
            texts = []
            for e in elems:
                vec = e.gate(g)
                if vec is None or vec.size is None:
                    raise NedError(f"cannot write vector '{e.path}': its elements have different gates", _WRITER)
                texts.append(str(vec.size))
            gate_lines.append(f"{g}[{_by_index(texts)}];")
        if not body and not gate_lines:
            return [_INDENT * 2 + f"{head}: {type_text};"]
        out = [_INDENT * 2 + f"{head}: {type_text} {{"]
        out += [_INDENT * 3 + line for line in body]
        if gate_lines:
            out.append(_INDENT * 3 + "gates:")
            out += [_INDENT * 4 + line for line in gate_lines]
        out.append(_INDENT * 2 + "}")
        return out

    def _render_connection(self, m: ModuleInstance, c: Connection) -> str:
        arrow = "<-->" if c.bidirectional else "-->"
        middle = f" {arrow} "
        if c.channel is not None:
            params = self._channel_params(c.channel)
            text = self.ref(c.channel.type_name)
            if params:
                text += " { " + " ".join(f"{k} = {v.ned()};" for k, v in params) + " }"
            middle = f" {arrow} {text} {arrow} "
        return f"{self._rel(m, c.src)}{middle}{self._rel(m, c.dst)};"


def _progression(have: list[tuple[ModuleInstance, Value]]) -> str | None:
    """``index * b + a`` if the int values of a whole vector are ``a + b * index``, else None."""
    if any(type(v.value) is not int or v.unit is not None for _, v in have):
        return None
    if [m.index for m, _ in have] != list(range(len(have))):
        return None
    a = have[0][1].value
    b = have[1][1].value - a
    if any(v.value != a + b * i for i, (_, v) in enumerate(have)):
        return None
    text = "index" if b == 1 else f"{b} * index"
    if a > 0:
        text += f" + {a}"
    elif a < 0:
        text += f" - {-a}"
    return text
