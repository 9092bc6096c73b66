"""Locating keys and values in TOML text: tables, dotted and quoted keys, inline tables, multi-line values, syntax errors."""

from __future__ import annotations

import doctest
import importlib
import tomllib

import pytest

from ibfabric.errors import ConfigError
from ibfabric.tomlpos import Locator, toml_error


def test_doctests():
    result = doctest.testmod(importlib.import_module("ibfabric.tomlpos"))
    assert result.attempted > 0 and result.failed == 0


class TestLocator:
    TEXT = (
        "top = 1\n"                                # 1
        "[a]\n"                                    # 2
        "  x = 'one'\n"                            # 3
        '"quoted key" = 2\n'                       # 4
        "b.c = { d = 1, 'e' = 2 }\n"               # 5
        "s = '''\n"                                # 6
        "[not_a_table]\n"                          # 7  inside a multi-line string
        "'''\n"                                    # 8
        "arr = [\n"                                # 9
        "  ['y'],\n"                               # 10 inside a multi-line array
        "]\n"                                      # 11
        "[[runs]]  # comment\n"                    # 12
        "n = 1\n"                                  # 13
    )

    @pytest.fixture
    def loc(self):
        tomllib.loads(self.TEXT)  # the text is valid TOML
        return Locator(self.TEXT, "f.toml")

    @pytest.mark.parametrize("path, key, value", [
        (("top",), "1:1", "1:7"),
        (("a",), "2:1", "2:1"),                    # a table header: its '['
        (("a", "x"), "3:3", "3:7"),                # indented key
        (("a", "quoted key"), "4:1", "4:16"),
        (("a", "b"), "5:1", "5:7"),                # prefix of a dotted key
        (("a", "b", "c"), "5:1", "5:7"),
        (("a", "b", "c", "d"), "5:9", "5:13"),     # inline table keys, on their parent's line
        (("a", "b", "c", "e"), "5:16", "5:22"),
        (("a", "arr"), "9:1", "9:7"),
        (("runs",), "12:1", "12:1"),
        (("runs", "n"), "13:1", "13:5"),
        (("a", "missing"), "2:1", "2:1"),          # falls back to its table
        (("not_a_table",), "1:1", "1:1"),          # ... or to the start of the file
        ((), "1:1", "1:1"),
    ])
    def test_at(self, loc, path, key, value):
        assert loc.at(path) == f"f.toml:{key}"
        assert loc.at(path, value=True) == f"f.toml:{value}"

    def test_crlf_and_first_place_wins(self):
        loc = Locator("[t]\r\nk = 1\r\n[t.u]\r\n[t]\r\n", "f.toml")
        assert loc.lines[1] == "k = 1"
        assert loc.at(("t", "k"), value=True) == "f.toml:2:5"
        assert loc.at(("t",)) == "f.toml:1:1"
        assert loc.at(("t", "u")) == "f.toml:3:1"

    def test_escaped_quoted_key(self):
        assert Locator('[t]\n"a\\"b" = 1\n', "f.toml").at(("t", 'a"b'), value=True) == "f.toml:2:10"


class TestTomlError:
    def error(self, text, **kw):
        with pytest.raises(tomllib.TOMLDecodeError) as info:
            tomllib.loads(text)
        return toml_error(info.value, text, "f.toml", **kw)

    def test_position_and_lower_case(self):
        err = self.error("a = 1\nb = = 2\n")
        assert type(err) is ConfigError and str(err) == "f.toml:2:5: invalid value"

    def test_end_of_document(self):
        err = self.error("a = 1\nb = [\n  1,")
        assert str(err).startswith("f.toml:3:5: ") and "end of document" not in str(err)

    def test_error_class(self):
        class MyError(ConfigError):
            pass

        assert type(self.error("a = ", error=MyError)) is MyError
