"""The fast path for one-token expressions (ned_like/fastexpr.py) never changes a parse or an error."""

from __future__ import annotations

import importlib.resources
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ibfabric.ned_like import NedError, fastexpr
from ibfabric.ned_like import parser as P


def lark_only(text: str):
    """What lark makes of *text* as an expression: the node, or the error message."""
    try:
        return P._run(text, "<override **.x>", "expr_only")
    except NedError as e:
        return str(e)


def fast(text: str):
    """What the fast path makes of it: None (not taken), the node, or the error message."""
    try:
        return fastexpr.simple(text, "<override **.x>")
    except NedError as e:
        return str(e)


def _grammar() -> str:
    return importlib.resources.files("ibfabric.ned_like").joinpath("ned.lark").read_text()


@pytest.mark.parametrize("name", ["QUANTITY", "NUMBER", "NAME"])
def test_token_patterns_are_the_grammars(name):
    m = re.search(rf"^{name}(?:\.\d+)?: /(.*)/$", _grammar(), re.M)
    assert m is not None and m.group(1) == getattr(fastexpr, name)


def test_reserved_words_are_the_grammars():
    import lark

    lexed = {t.pattern.value for t in P._lark().terminals
             if isinstance(t.pattern, lark.lexer.PatternStr) and t.pattern.value.isidentifier()}
    assert fastexpr.keywords() == lexed


@pytest.mark.parametrize("text, taken", [
    ("0.5", True), ("256B", True), ("100ns/m", True), ("5ns/km", True), ("1e3", True), ("1e3ns", True),
    ("4x", True), ("7e", True), ("1.5e400", True), ("99999999999999999999", True), ("9223372036854775808B", True),
    ('"updn"', True), ('""', True), ("QDR", True), ("fifo", True), ("x1", True), ("\n  1m ", True),
    ("\t\n\n 3", True), ("2Gbps", True),
    ("true", False), ("false", False), ("int", False), ("string", False), ("default", False), ("index", False),
    ("2 * 3", False), ("-1", False), ('"a\\"b"', False), ("1 // note", False), ("f(1)", False), ("a.b", False),
    ("", False), ("1 2", False), ("(1)", False),
])
def test_fast_path_agrees_with_lark(text, taken):
    got = fast(text)
    assert (got is not None) == taken
    if taken:
        assert got == lark_only(text)


def test_overrides_build_no_lark_parser(monkeypatch):
    from ibfabric.ned_like.params import _override_value

    def no_lark():
        raise AssertionError("lark was built for a one-token override")

    monkeypatch.setattr(P, "_lark", no_lark)
    assert _override_value("**.load", "0.5", "double", None, "load", "h[0]").value == 0.5
    assert _override_value("**.routing", "updn", "string", None, "routing", "sm").value == "updn"
    assert _override_value("**.delay", "100ns", "double", "s", "delay", "l").value == 100


_TOKENS = st.one_of(
    st.from_regex(fastexpr.QUANTITY, fullmatch=True),
    st.from_regex(fastexpr.NUMBER, fullmatch=True),
    st.from_regex(fastexpr.NAME, fullmatch=True),
    st.from_regex(r'"[^"\\\n]*"', fullmatch=True),
    st.sampled_from(sorted(fastexpr.keywords())),
    st.text(alphabet='0123456789.eE+-*/%"abcnsmxBKi_ ()\\\n\t', max_size=12),
)


@settings(max_examples=400, deadline=None)
@given(lead=st.text(alphabet=" \t\n\r", max_size=3), token=_TOKENS, trail=st.text(alphabet=" \t\n", max_size=3))
def test_fast_path_never_differs(lead, token, trail):
    text = lead + token + trail
    got = fast(text)
    if got is not None:
        assert got == lark_only(text)
