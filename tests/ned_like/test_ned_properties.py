"""Property tests: round trips through the writer, quantity literals, patterns, parser robustness."""

import math
import re
from functools import lru_cache

import attrs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ibfabric.ned_like import NedError, TypeLibrary, elaborate, match, parse, parse_expression, parse_value, write_ned
from ibfabric.ned_like.model import Value

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------- random networks
#
# The generator writes NED source for random simple types (random parameters,
# units, defaults and gate vectors), an optional compound type built from the
# first one, and a network with random vectors, body and deep assignments,
# and random valid connections (it tracks every gate, so that it never
# connects one twice).  Some networks also get overrides.

PARAM_KINDS = [
    ("int", None), ("int", "B"), ("double", None), ("double", "ns"), ("double", "us"),
    ("double", "Gbps"), ("double", "m"), ("double", "ns/m"), ("bool", None), ("string", None),
]


@st.composite
def literal(draw, ptype, unit):
    if ptype == "bool":
        return draw(st.sampled_from(["true", "false"]))
    if ptype == "string":
        return Value(draw(st.text(max_size=6))).ned()
    if ptype == "int":
        if unit == "B":
            n = draw(st.integers(0, 10**6))
            return draw(st.sampled_from([f"{n}B", f"{n}KiB"]))
        return str(draw(st.integers(-(10**6), 10**9)))
    if unit is None:
        x = draw(st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False))
        return repr(x)
    x = draw(st.floats(0, 1e6, allow_nan=False, allow_infinity=False) | st.integers(0, 10**6))
    return f"{x!r}{unit}" if isinstance(x, float) else f"{x}{unit}"


@attrs.define
class GenType:
    name: str
    params: list  # (name, ptype, unit, default text or None)
    gates: dict  # name -> [kind, size or None (unsized), vector]
    compound: bool = False


@st.composite
def simple_types(draw, count):
    types = []
    for t in range(count):
        params = []
        for i in range(draw(st.integers(0, 4))):
            ptype, unit = draw(st.sampled_from(PARAM_KINDS))
            default = draw(st.none() | literal(ptype, unit))
            params.append((f"p{i}", ptype, unit, default))
        gates = {}
        port = draw(st.sampled_from(["none", "unsized", 0, 1, 2, 3]))
        if port != "none":
            gates["port"] = ["inout", None if port == "unsized" else port, True]
        if draw(st.booleans()):
            gates["in"] = ["input", 0, False]
            gates["out"] = ["output", 0, False]
        if draw(st.booleans()):
            gates["rx"] = ["input", draw(st.integers(0, 2)), True]
            gates["tx"] = ["output", draw(st.integers(0, 2)), True]
        types.append(GenType(f"T{t}", params, gates))
    return types


def type_source(t: GenType) -> str:
    lines = [f"simple {t.name}", "{", "    parameters:"]
    for name, ptype, unit, default in t.params:
        u = f" @unit({unit})" if unit else ""
        d = f" = {default}" if default is not None else ""
        lines.append(f"        {ptype} {name}{u}{d};")
    lines.append("    gates:")
    for name, (kind, size, vector) in t.gates.items():
        dims = ("[]" if size is None else f"[{size}]") if vector else ""
        lines.append(f"        {kind} {name}{dims};")
    lines.append("}")
    return "\n".join(lines)


@attrs.define
class Inst:
    ref: str  # as written in the network: g1[2]
    gates: dict  # name -> dict(kind=..., size=..., growable=..., vector=..., used=set())
    port: str = "port"  # the name of its inout gate vector


CHANNELS = st.sampled_from([
    "", "Link", "Link { length = 3m; }", "Link { width = \"12x\"; speed = \"EDR\"; }",
    "DelayChannel { delay = 7ns; }", "{ delay = 2ns; }", "{ datarate = 4Gbps; }", "W", "W { tag = \"q\\\"\"; }",
])


def take(gate, halves, draw):
    """An index text for a gate end with the needed halves free (marking them), or None."""
    if not gate["vector"]:
        if any((None, x) in gate["used"] for x in halves):
            return None
        gate["used"].update((None, x) for x in halves)
        return ""
    free = [i for i in range(gate["size"]) if all((i, x) not in gate["used"] for x in halves)]
    options = [("index", i) for i in free]
    if free or gate["growable"]:
        options.append(("plusplus", None))
    if not options:
        return None
    how, i = draw(st.sampled_from(options))
    if how == "plusplus":  # the first free gate, or a new one
        if free:
            i = free[0]
        else:
            i = gate["size"]
            gate["size"] += 1
    gate["used"].update((i, x) for x in halves)
    return "++" if how == "plusplus" else f"[{i}]"


@st.composite
def connection(draw, insts):
    """A valid connection line, or None; a failed attempt leaves the gates as they were."""
    saved = [(g, g["size"], set(g["used"])) for inst in insts for g in inst.gates.values()]
    line = draw(_connection(insts))
    if line is None:
        for g, size, used in saved:
            g["size"], g["used"] = size, used
    return line


@st.composite
def _connection(draw, insts):
    a = draw(st.sampled_from(insts))
    b = draw(st.sampled_from(insts))
    forms = []
    if a.port in a.gates and b.port in b.gates and a is not b:
        forms += ["bidir", "halves"]
    if "out" in a.gates and "in" in b.gates:
        forms.append("scalar")
    if "tx" in a.gates and "rx" in b.gates:
        forms.append("vector")
    if not forms:
        return None
    form = draw(st.sampled_from(forms))
    chan = draw(CHANNELS)
    if form in ("bidir", "halves"):
        ga, gb = a.gates.get(a.port), b.gates.get(b.port)
        if ga is None or gb is None or a is b:
            return None
        ha, hb, arrow = ("io", "io", "<-->") if form == "bidir" else ("o", "i", "-->")
        ia = take(ga, ha, draw)
        ib = take(gb, hb, draw) if ia is not None else None
        if ia is None or ib is None:
            return None
        suffix_a, suffix_b = ("", "") if form == "bidir" else ("$o", "$i")
        left, right = f"{a.ref}.{a.port}{suffix_a}{ia}", f"{b.ref}.{b.port}{suffix_b}{ib}"
    else:
        out_name, in_name = ("out", "in") if form == "scalar" else ("tx", "rx")
        go, gi = a.gates.get(out_name), b.gates.get(in_name)
        if go is None or gi is None:
            return None
        io = take(go, "x", draw)
        ii = take(gi, "x", draw) if io is not None else None
        if io is None or ii is None:
            return None
        arrow = "-->"
        left, right = f"{a.ref}.{out_name}{io}", f"{b.ref}.{in_name}{ii}"
        if draw(st.booleans()):
            arrow, left, right = "<--", right, left
    if chan:
        return f"{left} {arrow} {chan} {arrow} {right};"
    return f"{left} {arrow} {right};"


def param_values(t: GenType, draw, vector: bool) -> list[str]:
    """Body assignments: every parameter without a default, and some others."""
    body = []
    for name, ptype, unit, default in t.params:
        if default is None or draw(st.booleans()):
            if ptype == "int" and unit is None and vector and draw(st.booleans()):
                body.append(f"{name} = index * {draw(st.integers(-3, 3))} + {draw(st.integers(0, 9))};")
            else:
                body.append(f"{name} = {draw(literal(ptype, unit))};")
    return body


def compound_source(t0: GenType, k: int, inner: list[str]) -> str:
    """Module C: k elements of type t0, each joined to one gate of C's 'up' vector."""
    size = t0.gates["port"][1]
    link = "x[i].port++" if size is None else "x[i].port[0]" if size > 0 else None
    conns = f"for i=0..k-1 {{ up[i] <--> {link}; }}" if link else ""
    deep = "x[0].p0 = default(1);" if t0.params and t0.params[0][1:3] == ("int", None) else ""
    return (
        f"module C {{ parameters: int k = {k}; {deep} gates: inout up[k];\n"
        f"  submodules: x[k]: {t0.name} {{ {' '.join(inner)} }}\n"
        f"  connections allowunconnected: {conns} }}"
    )


@st.composite
def networks(draw):
    """(types source, network source, overrides) of a random valid network."""
    types = draw(simple_types(draw(st.integers(1, 3))))
    sources = [type_source(t) for t in types]
    sources.append('channel W { parameters: double d @unit(ns) = 1ns; string tag = "t"; }')
    k = None
    if "port" in types[0].gates and draw(st.booleans()):
        k = draw(st.integers(1, 2))
        sources.append(compound_source(types[0], k, param_values(types[0], draw, True)))
    groups, insts, deep, kinds = [], [], [], []
    for g in range(draw(st.integers(1, 4))):
        t = None if k is not None and draw(st.booleans()) else draw(st.sampled_from(types))
        size = draw(st.none() | st.integers(0, 3))
        body = [] if t is None else param_values(t, draw, size is not None)
        gate_sizes = {}
        if t is not None and "port" in t.gates and t.gates["port"][1] is None and draw(st.booleans()):
            gate_sizes["port"] = draw(st.integers(0, 3))
            body.append(f"gates: port[{gate_sizes['port']}];")
        if t is not None and t.params:
            kinds.append((g, t, size))
        head = f"g{g}" if size is None else f"g{g}[{size}]"
        groups.append(f"        {head}: {'C' if t is None else t.name} {{ {' '.join(body)} }}")
        for i in [None] if size is None else range(size):
            ref = f"g{g}" if i is None else f"g{g}[{i}]"
            if t is None:
                gates = {"up": {"kind": "inout", "size": k, "growable": False, "vector": True, "used": set()}}
                insts.append(Inst(ref, gates, "up"))
                continue
            gates = {}
            for name, (kind, gsize, vector) in t.gates.items():
                s = gate_sizes.get(name, gsize)
                gates[name] = {"kind": kind, "size": s or 0, "growable": s is None, "vector": vector, "used": set()}
            for name, ptype, unit, _ in t.params:
                if draw(st.integers(0, 5)) == 0:
                    deep.append(f"        {ref}.{name} = {draw(literal(ptype, unit))};")
            insts.append(Inst(ref, gates))
    conns = []
    for _ in range(draw(st.integers(0, 12))):
        c = draw(connection(insts)) if insts else None
        if c:
            conns.append("        " + c)
    net = ["network net", "{", "    parameters:", *deep, "    submodules:", *groups,
           "    connections allowunconnected:", *conns, "}"]
    overrides = {}
    for g, t, size in draw(st.lists(st.sampled_from(kinds), max_size=2)) if kinds else ():
        name, ptype, unit, _ = draw(st.sampled_from(t.params))
        pattern = draw(st.sampled_from([f"net.g{g}", f"*.g{g}", f"**.g{g}"])) + ("[*]" if size is not None else "")
        if ptype == "string":
            overrides[f"{pattern}.{name}"] = draw(st.sampled_from(['"quoted"', "plain-text", "x y"]))
        else:
            overrides[f"{pattern}.{name}"] = draw(literal(ptype, unit))
    return "\n\n".join(sources), "\n".join(net), overrides


@lru_cache(maxsize=1)
def _base_library():
    return TypeLibrary.default()


class TestRoundTrip:
    @SETTINGS
    @given(networks())
    def test_random_networks_round_trip(self, case):
        types_src, net_src, overrides = case
        net = elaborate(types_src + "\n\n" + net_src, overrides=overrides)
        text = write_ned(net)
        again = elaborate(text)
        assert again.canonical() == net.canonical(), text

    @SETTINGS
    @given(networks())
    def test_random_networks_round_trip_with_a_library(self, case):
        types_src, net_src, overrides = case
        lib = _base_library().copy()
        lib.add_source("package gen;\n" + types_src, "gen.ned")
        net = elaborate("import gen.*;\n" + net_src, library=lib, overrides=overrides)
        text = write_ned(net, library=lib)
        again = elaborate(text, library=lib)
        assert again.canonical() == net.canonical(), text
        assert "simple T" not in text  # library types are referenced, not declared


# ---------------------------------------------------------------- quantities


class TestQuantityLiterals:
    @SETTINGS
    @given(
        st.sampled_from(["ns", "B", "bps", "m", "ns/m"]),
        st.floats(-1e250, 1e250, allow_nan=False, allow_infinity=False) | st.integers(-(2**63) + 1, 2**63 - 1),
    )
    def test_value_ned_parses_back(self, unit, x):
        v = Value(x, unit)
        back = parse_value(v.ned())
        assert back == v and back.unit == unit
        assert math.copysign(1, back.value) == math.copysign(1, x) or back.value == 0

    @SETTINGS
    @given(
        st.floats(allow_nan=False, allow_infinity=False)
        | st.integers(-(2**63) + 1, 2**63 - 1)  # ints are 64-bit; -2**63 has no literal (its negation is out of range)
        | st.booleans()
        | st.text()
    )
    def test_plain_values_parse_back(self, x):
        v = Value(x)
        assert parse_value(v.ned()) == v
        assert type(parse_value(v.ned()).value) is type(x)


# ---------------------------------------------------------------- patterns


def reference_match(pattern: str, path: str) -> bool:
    """A backtracking matcher written straight from the pattern rules."""
    tokens = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            tokens.append(("any",))
            i += 2
        elif pattern[i] == "*":
            tokens.append(("seg",))
            i += 1
        elif pattern[i] == "?":
            tokens.append(("one",))
            i += 1
        elif pattern[i] in "[{":
            close = "]" if pattern[i] == "[" else "}"
            j = pattern.index(close, i)
            inner = pattern[i + 1 : j]
            if inner == "*":
                tokens.append(("index", None, None))
            elif ".." in inner:
                a, b = inner.split("..")
                lo, hi = (int(a) if a else None), (int(b) if b else None)
                tokens.append(("index" if close == "]" else "number", lo, hi))
            else:
                tokens.append(("index", int(inner), int(inner)))
            i = j + 1
        else:
            tokens.append(("char", pattern[i]))
            i += 1

    def number_at(s, k):
        m = re.match(r"\d+", s[k:])
        return m.group(0) if m else None

    def in_range(digits, lo, hi):
        if digits != str(int(digits)):
            return False
        n = int(digits)
        return (lo is None or n >= lo) and (hi is None or n <= hi)

    @lru_cache(maxsize=None)
    def go(t, k):
        if t == len(tokens):
            return k == len(path)
        tok = tokens[t]
        kind = tok[0]
        if kind == "any":
            return any(go(t + 1, j) for j in range(k, len(path) + 1))
        if kind == "seg":
            j = k
            while True:
                if go(t + 1, j):
                    return True
                if j == len(path) or path[j] == ".":
                    return False
                j += 1
        if kind == "one":
            return k < len(path) and path[k] != "." and go(t + 1, k + 1)
        if kind == "char":
            return k < len(path) and path[k] == tok[1] and go(t + 1, k + 1)
        if kind == "index":
            if not path.startswith("[", k):
                return False
            digits = number_at(path, k + 1)
            if digits is None or not path.startswith("]", k + 1 + len(digits)):
                return False
            return in_range(digits, tok[1], tok[2]) and go(t + 1, k + 2 + len(digits))
        # number: the whole run of digits, not preceded by a digit
        if k > 0 and path[k - 1].isdigit():
            return False
        digits = number_at(path, k)
        return digits is not None and in_range(digits, tok[1], tok[2]) and go(t + 1, k + len(digits))

    return go(0, 0)


names = st.sampled_from(["net", "sw", "hca", "a", "b1", "port", "lid", "x"])
indices = st.integers(0, 15)


@st.composite
def paths(draw):
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        name = draw(names)
        if draw(st.booleans()):
            name += f"[{draw(indices)}]"
        parts.append(name)
    return ".".join(parts)


@st.composite
def patterns(draw):
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        piece = draw(st.sampled_from(["name", "*", "**", "?", "name*", "n?me", "num"]))
        if piece == "name":
            text = draw(names)
        elif piece == "name*":
            text = draw(names)[:1] + "*"
        elif piece == "n?me":
            n = draw(names)
            text = n[:1] + "?" + n[2:]
        elif piece == "num":
            lo, hi = sorted(draw(st.lists(indices, min_size=2, max_size=2)))
            text = draw(names)[:1] + f"{{{lo}..{hi}}}"
        else:
            text = piece
        if piece not in ("**",) and draw(st.booleans()):
            lo, hi = sorted(draw(st.lists(indices, min_size=2, max_size=2)))
            text += draw(st.sampled_from(["[*]", f"[{lo}]", f"[{lo}..{hi}]", f"[..{hi}]", f"[{lo}..]"]))
        parts.append(text)
    return ".".join(parts)


class TestPatternMatching:
    @settings(max_examples=300, deadline=None)
    @given(patterns(), paths())
    def test_agrees_with_reference(self, pattern, path):
        assert match(pattern, path) == reference_match(pattern, path)

    @settings(max_examples=100, deadline=None)
    @given(paths())
    def test_a_path_matches_itself(self, path):
        assert match(path, path) and reference_match(path, path)


# ---------------------------------------------------------------- parser robustness

VALID = """
package p.q;
import ibfabric.components.*;
simple S like IHost { parameters: int n = 2; double d @unit(ns) = 5ns; gates: inout port[n + 1]; }
network net {
    parameters: s[0].n = 3; **.d = 1us;
    submodules: s[2]: S { n = index + 1; } h: <"HCA"> like IHost if true;
    connections allowunconnected:
        for i=0..1 { s[i].port[1] <--> Link { length = 2m; } <--> h.port++; }
        s[0].port$o[0] --> { delay = 1ns; } --> s[1].port$i[0];
}
"""

TOKENS = [
    "simple", "module", "network", "channel", "parameters", "gates", "submodules", "connections", "{", "}",
    ";", ":", "=", "[", "]", "(", ")", "<-->", "-->", "<--", "++", "$o", ".", "..", ",", "for", "if", "like",
    "<", ">", "int", "double", "string", "bool", "x", "sw", "3", "2.5", "100ns", "5ns/m", '"s"', "@unit(ns)",
    "**", "*", "?", "+", "-", "/", "%", "^", "&&", "||", "!", "index", "sizeof", "\n", " ", "//c\n", "#", "\\",
    "default", "import", "package", "a.b", "'", "é", "\x00",
]


class TestParserRobustness:
    @SETTINGS
    @given(st.lists(st.sampled_from(TOKENS), max_size=40).map(" ".join) | st.text(max_size=60))
    def test_garbage_raises_only_ned_errors(self, text):
        for f in (parse, parse_expression):
            try:
                f(text)
            except NedError as e:
                assert str(e).count("\n") == 0 and e.line >= 1 and e.column >= 1

    @SETTINGS
    @given(st.data())
    def test_mutated_sources_raise_only_ned_errors(self, data):
        text = VALID
        for _ in range(data.draw(st.integers(1, 4))):
            i = data.draw(st.integers(0, len(text)))
            op = data.draw(st.sampled_from(["delete", "insert", "replace"]))
            piece = data.draw(st.sampled_from(TOKENS))
            if op == "delete":
                text = text[:i] + text[i + data.draw(st.integers(1, 5)):]
            elif op == "insert":
                text = text[:i] + piece + text[i:]
            else:
                text = text[:i] + piece + text[i + len(piece):]
        try:
            net = elaborate(text)
        except NedError as e:
            assert str(e).count("\n") == 0
        else:  # whatever elaborates also round-trips
            assert elaborate(write_ned(net)).canonical() == net.canonical()

    def test_the_unmutated_source_is_valid(self):
        assert len(elaborate(VALID).simple_modules()) == 3
