"""The examples of docs/ned-language.md and the doctests of ibfabric.ned_like run."""

import doctest
import importlib
import re
from pathlib import Path

import pytest

from ibfabric.ned_like import elaborate, parse, write_ned

DOC = Path(__file__).resolve().parents[2] / "docs" / "ned-language.md"


def ned_blocks() -> list[str]:
    return re.findall(r"```ned\n(.*?)```", DOC.read_text(), re.S)


class TestLanguageReference:
    def test_first_example_elaborates(self):
        net = elaborate(ned_blocks()[0], filename="fig1.ned")
        assert [m.path for m in net.simple_modules()][:2] == ["fig1.sw[0]", "fig1.sw[1]"]
        assert len(net.root.connections) == 5
        assert elaborate(write_ned(net)).canonical() == net.canonical()

    def test_type_examples_elaborate(self):
        types = next(b for b in ned_blocks() if "moduleinterface IHost" in b)
        net = elaborate(types, network="pod")
        assert len(net.simple_modules()) == 2 * (1 + 4)
        assert {t.kind for t in parse(types).types} == {
            "simple", "module", "network", "moduleinterface", "channel", "channelinterface",
        }

    def test_connection_examples_parse(self):
        checked = 0
        for block in ned_blocks():
            if block.lstrip().startswith(("connections", "for ")):
                body = block if block.lstrip().startswith("connections") else "connections:\n" + block
                parse(f"network n {{\n{body}\n}}")
                checked += 1
        assert checked == 2


@pytest.mark.parametrize(
    "module",
    ["ibfabric.ned_like", "ibfabric.ned_like.library", "ibfabric.ned_like.parser", "ibfabric.ned_like.patterns"],
)
def test_doctests(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0


class TestDocumentationComments:
    """The comments above a declaration and after a parameter on its line are its documentation."""

    def test_the_reference_example(self):
        block = next(b for b in ned_blocks() if "simple Probe" in b)
        probe = parse(block).types[0]
        assert probe.doc == "A probe that counts the packets it sees."
        docs = {p.name: p.doc for p in probe.params}
        assert docs == {
            "delay": "how long a packet is held before it is counted; 0ns counts on\narrival",
            "limit": "packets to count; 0 = no limit",
            "label": "shown in the results",
        }

    def test_both_forms_paragraphs_and_several_declarations_on_a_line(self):
        t = parse(
            "//\n// First.\n//\n// Second.\n//\nsimple A\n{\n"
            "    parameters:\n"
            "        // above\n"
            "        int a = 1;  // after\n"
            "        int b = 2; int c = 3; // the last one's\n"
            "        int d;\n"
            "}\n"
        ).types[0]
        assert t.doc == "First.\n\nSecond."
        assert [(p.name, p.doc) for p in t.params] == [
            ("a", "above\nafter"), ("b", ""), ("c", "the last one's"), ("d", "")]

    def test_a_trailing_comment_is_not_the_next_declarations(self):
        t = parse("simple A {\n  int a; // of a\n  int b;\n}\n").types[0]
        assert [p.doc for p in t.params] == ["of a", ""]
