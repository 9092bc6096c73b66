"""The fast path for long connections sections (ned_like/fastconn.py) never changes a parse or an error."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ibfabric.ned_like import NedError, fastconn, fastexpr
from ibfabric.ned_like import parser as P
from ibfabric.topologies import SHIPPED, generators as gen, shipped


def lark_only(text: str, filename: str = "t.ned"):
    """The parse without the fast path (or the error message it gives)."""
    try:
        return P._parse_sections(text, filename, text, ())
    except NedError as e:
        return str(e)


def with_fast_path(text: str, filename: str = "t.ned"):
    try:
        return P._parse(text, filename)
    except NedError as e:
        return str(e)


@pytest.fixture
def short_sections(monkeypatch):
    monkeypatch.setattr(fastconn, "MIN_LINES", 1)


GENERATED = {
    "fat_tree(2, 3)": lambda: gen.fat_tree(2, 3),
    "fat_tree(4, 3)": lambda: gen.fat_tree(4, 3),
    "mesh": lambda: gen.mesh((3, 3), hosts_per_switch=2),
    "torus": lambda: gen.torus((3, 4)),
    "hypercube": lambda: gen.hypercube(3),
    "irregular": lambda: gen.irregular(16, seed=3),
}
#: links that are not 4x QDR have a channel body: lark reads those sections
OTHER_LINKS = {
    "mesh EDR": lambda: gen.mesh((3, 3), hosts_per_switch=2, speed="EDR"),
    "torus 1x": lambda: gen.torus((3, 4), width="1x"),
    "bermudez2006_fig1": gen.bermudez2006_fig1,
}


@pytest.mark.parametrize("name", GENERATED)
def test_generated_fabrics_parse_the_same(name, short_sections):
    text = gen.to_ned(GENERATED[name](), name="net")
    assert fastconn.split(text, "t.ned", fastexpr.keywords()) is not None  # the fast path is taken
    fast = with_fast_path(text)
    assert fast == lark_only(text)
    assert fast.types[0].connections  # and it read the connections


@pytest.mark.parametrize("name", OTHER_LINKS)
def test_fabrics_with_other_links_parse_the_same(name, short_sections):
    text = gen.to_ned(OTHER_LINKS[name](), name="net")
    assert with_fast_path(text) == lark_only(text)


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_files_parse_the_same(name, short_sections):
    text = shipped(name).read_text()
    assert with_fast_path(text, name) == lark_only(text, name)


def test_a_big_generated_file_takes_the_fast_path_at_the_default_length():
    text = gen.to_ned(gen.fat_tree(4, 3), name="net")  # 64 host links, 128 between switches
    split = fastconn.split(text, "t.ned", fastexpr.keywords())
    assert split is not None and len(split[1]) == 1 and len(split[1][0][1]) == 192
    assert split[0].count("\n") == text.count("\n")  # line numbers kept for lark
    assert with_fast_path(text) == lark_only(text)


NET = "network n\n{{\n    submodules:\n        a: HCA;\n        b: HCA;\n    connections:\n{lines}\n}}\n"


@pytest.mark.parametrize("line, why", [
    ("        a.port[1] <--> Link <--> b.port[1]; // a comment", "a comment"),
    ("        a.port$o[1] --> b.port$i[1];", "gate halves"),
    ("        a.port[1] --> Link <-- b.port[1];", "mismatched arrows"),
    ("        index.port[1] <--> b.port[1];", "a keyword as a name"),
    ("        a.port[1] <--> Link <--> for.port[1];", "a keyword as a name"),
    ("        a.port[99999999999999999999] <--> b.port[1];", "an integer beyond 64 bits"),
    ("        a.port[01] <--> b.port[1];", "a number with a leading zero"),
    ("        a.port[1] <--> Link { width = \"1x\"; } <--> b.port[1];", "a channel body"),
    ("        a.port[1] <--> b.port[1]", "no semicolon"),
])
def test_anything_else_gives_lark_s_answer_or_message(line, why, short_sections):
    good = "        a.port[2] <--> Link <--> b.port[2];"
    for lines in ([good, line, good], [line], [good] * 3 + [line]):
        text = NET.format(lines="\n".join(lines))
        assert with_fast_path(text) == lark_only(text), why


def test_connections_of_a_simple_module_are_lark_s_error(short_sections):
    text = "simple S\n{\n    gates:\n        inout port[];\n    connections:\n        a.port[1] <--> b.port[1];\n}\n"
    assert with_fast_path(text) == lark_only(text)
    assert "cannot have connections" in with_fast_path(text)


def test_an_error_elsewhere_is_lark_s_error(short_sections):
    text = NET.format(lines="        a.port[1] <--> b.port[1];\n        a.port[2] <--> b.port[2];") + "network {\n"
    assert with_fast_path(text) == lark_only(text)
    assert isinstance(with_fast_path(text), str)


_names = st.sampled_from(["a", "b", "sw0", "h_1", "index", "for", "if", "this", "Link", "port", "x9"])
_ints = st.sampled_from(["0", "1", "7", "10", "01", "64", "18446744073709551616"])
_arrows = st.sampled_from(["<-->", "-->", "<--"])
_space = st.sampled_from(["", " ", "  ", "\t"])


@st.composite
def connection_lines(draw):
    def gate():
        return f"{draw(_names)}{draw(_space)}.{draw(_space)}{draw(_names)}{draw(_space)}[{draw(_ints)}]"

    arrow = draw(_arrows)
    channel = ""
    if draw(st.booleans()):
        second = draw(st.one_of(st.just(arrow), _arrows))
        channel = f"{draw(_space)}{draw(_names)}{draw(_space)}{second}"
    end = draw(st.sampled_from([";", ";", ";", "", "; // c"]))
    return f"{draw(_space)}{gate()}{draw(_space)}{arrow}{channel}{draw(_space)}{gate()}{draw(_space)}{end}"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(connection_lines(), min_size=1, max_size=6))
def test_random_connections_sections_parse_the_same(short_sections, lines):
    text = NET.format(lines="\n".join(lines))
    assert with_fast_path(text) == lark_only(text)
