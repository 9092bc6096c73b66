"""Fuzzing the dump readers: mutated ibnetdiscover and OpenSM dumps load or fail with one located line.

The shipped dumps are mutated at random (lines deleted, duplicated or
swapped, numbers replaced by huge, negative or garbage ones, bytes flipped,
text inserted, the file cut short).  Whatever comes out, parsing, loading
(:func:`~ibfabric.topologies.load_fabric`) and the ``file`` routing engine
either succeed or raise an :class:`~ibfabric.errors.IbfabricError` whose
message is one line starting with ``file:line:col:`` -- never another
exception, never a hang (every example has a deadline).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ibfabric.components.routing.mfts import MulticastTables, check_multicast, read_mfts, shared_tree, write_mfts
from ibfabric.components.routing.opensm import parse_lfts, read_lfts, with_dump_identity
from ibfabric.errors import IbfabricError
from ibfabric.plugins.routing import file as file_engine
from ibfabric.topologies import generators, load_fabric
from ibfabric.topologies.ibnetdiscover import ibnetdiscover_to_ned, parse_ibnetdiscover

ROOT = Path(__file__).resolve().parents[2]
IBNET = {p.name: p.read_bytes() for p in sorted((ROOT / "tests" / "data" / "ibnetdiscover").glob("*.ibnetdiscover"))}
OPENSM = ROOT / "topologies" / "data" / "opensm"
# dumps of the two small fabrics (fig1, irregular16), each with the fabric its LIDs and GUIDs describe
DUMPS = {p.name: p.read_bytes() for p in sorted(OPENSM.glob("*.dump")) if p.name.startswith(("fig1.", "irregular16."))}
FABRICS = {
    "fig1": generators.bermudez2006_fig1(),
    "irregular16": generators.irregular(16, links_per_switch=4, hosts_per_switch=2, seed=1),
}



def _mfts(fabric) -> bytes:
    """Multicast tables of *fabric*: a few groups on shared trees, as an opensm-mfts.dump."""
    t = MulticastTables(fabric)
    n = len(fabric.ep_node)
    for k, members in enumerate([range(n), range(0, n, 3), [1, n - 1], range(n // 2)]):
        shared_tree(t, 0xC000 + 7 * k, list(members))
    return write_mfts(t).encode()


MFT_FABRICS = {f"{name}.mfts.dump": FABRICS[name].with_lids() for name in FABRICS}
MFTS = {name: _mfts(g) for name, g in MFT_FABRICS.items()}
NUMBER = re.compile(rb"0x[0-9a-fA-F]+|\d+")
REPLACEMENTS = [b"0", b"-1", b"-0", b"1", b"255", b"256", b"65535", b"49151", b"49152", b"4294967296", b"9" * 25,
                b"9" * 400, b"0x", b"0xZZ", b"0x" + b"f" * 30, b"1e9", b"", b"01", b"ffffffffffffffffffff"]
SETTINGS = settings(max_examples=100, deadline=3000, suppress_health_check=[HealthCheck.too_slow], derandomize=True)


@st.composite
def mutated(draw, sources: dict[str, bytes]) -> tuple[str, bytes]:
    """``(name, bytes)``: one of *sources*, mutated one to four times."""
    name = draw(st.sampled_from(sorted(sources)))
    lines = sources[name].split(b"\n")
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            lines = [b""]
        op = draw(st.sampled_from(["delete", "duplicate", "swap", "number", "number", "number", "flip", "insert", "cut"]))
        i = draw(st.integers(0, len(lines) - 1))
        line = lines[i]
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(draw(st.integers(0, len(lines))), line)
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "number":
            spans = [m.span() for m in NUMBER.finditer(line)]
            if spans:
                a, b = draw(st.sampled_from(spans))
                new = draw(st.sampled_from(REPLACEMENTS) | st.integers(-(10**30), 10**30).map(lambda n: str(n).encode()))
                lines[i] = line[:a] + new + line[b:]
        elif op == "flip" and line:
            k = draw(st.integers(0, len(line) - 1))
            lines[i] = line[:k] + bytes([draw(st.integers(0, 255))]) + line[k + 1 :]
        elif op == "insert":
            k = draw(st.integers(0, len(line)))
            lines[i] = line[:k] + draw(st.binary(max_size=12) | st.sampled_from([b'"', b"[", b"]", b"#", b"(", b" lid 5"]))
            lines[i] += line[k:]
        elif op == "cut":
            lines = lines[: i + 1]
            lines[i] = line[: draw(st.integers(0, len(line)))]
    return name, b"\n".join(lines)


def clean(exc: IbfabricError, where: str | None = None) -> None:
    """A one-line message, located in *where* (a file name) if given."""
    text = str(exc)
    assert text and len(text.splitlines()) == 1 and len(text) < 2000, repr(text)
    if where is not None:
        assert re.match(rf"^{re.escape(where)}:\d+:\d+: \S", text), text


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


class TestIbnetdiscoverDumps:
    @given(mutated(IBNET))
    @SETTINGS
    def test_parse_and_convert(self, sample):
        name, data = sample
        text = data.decode("utf-8", "replace")
        try:
            parse_ibnetdiscover(text, name)
            ibnetdiscover_to_ned(text, name)
        except IbfabricError as exc:
            clean(exc, name)

    @given(mutated(IBNET))
    @SETTINGS
    def test_load_fabric_from_a_file(self, scratch, sample):
        name, data = sample
        path = scratch / name
        path.write_bytes(data)
        try:
            g = load_fabric(path)
        except IbfabricError as exc:
            clean(exc, str(path))
        else:
            assert len(g.nodes) >= 1 and g.max_lid <= 0xBFFF


@pytest.fixture(scope="module")
def fabrics():
    """Each dump's fabric, with the dump's own LIDs and GUIDs."""
    return {name: with_dump_identity(FABRICS[name.split(".")[0]], data.decode()) for name, data in DUMPS.items()}


class TestOpenSMDumps:
    @given(mutated(DUMPS))
    @SETTINGS
    def test_parse_and_read(self, fabrics, sample):
        name, data = sample
        text = data.decode("utf-8", "replace")
        try:
            parse_lfts(text, name)
            t = read_lfts(name, fabrics[name], text=text)
        except IbfabricError as exc:
            clean(exc, name)
        else:
            assert t.lft.shape == (len(t.fabric.switches), t.fabric.max_lid + 1)

    @given(mutated(DUMPS))
    @SETTINGS
    def test_file_routing_engine(self, fabrics, scratch, sample):
        name, data = sample
        path = scratch / name
        path.write_bytes(data)
        try:
            t = file_engine.compute(fabrics[name], {"path": str(path)}, np.random.default_rng(1))
        except IbfabricError as exc:
            clean(exc, str(path))
        else:
            own = t.fabric.lid_owner
            for r, node in enumerate(t.fabric.switches.tolist()):  # nothing but a switch's own LIDs goes to port 0
                to_zero = np.flatnonzero(t.lft[r] == 0)
                assert all(own[lid] >= 0 and int(t.fabric.ep_node[own[lid]]) == node for lid in to_zero.tolist())


class TestMftsDumps:
    @given(mutated(MFTS))
    @SETTINGS
    def test_read_and_check(self, scratch, sample):
        name, data = sample
        path = scratch / name
        path.write_bytes(data)
        try:
            t = read_mfts(path, MFT_FABRICS[name])
        except IbfabricError as exc:
            clean(exc, str(path))
        else:
            assert all(0xC000 <= m <= 0xFFFE for m in t.mlids)
            assert all(isinstance(line, str) and "\n" not in line for line in check_multicast(t))

    def test_unmutated_tables_are_clean(self):
        for name, data in MFTS.items():
            t = read_mfts(name, MFT_FABRICS[name], text=data.decode())
            assert len(t.mlids) == 4 and check_multicast(t) == []
