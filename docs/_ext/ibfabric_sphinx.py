"""What the ibfabric site needs beyond stock Sphinx: a NED lexer, the CLI reference, offline links.

- ``ned`` code blocks are highlighted by :class:`NedLexer`.
- The ``ibfabric-cli`` directive writes one section per command and
  subcommand of the ``ibfabric`` parser, with its ``--help`` text as argparse
  prints it (help strings are plain text, not reStructuredText: ``**.load``
  must print as it is typed).
- Relative links from a Markdown page to a source file of the repository
  (``../plugins/hookspecs.py``), which work on GitHub, open the API page of
  that module on the site.
- numpydoc's docstring template is compiled once, not once per docstring
  (:func:`cache_numpydoc_template`).
- Names that a module imports only for type checking (``if TYPE_CHECKING:``),
  ibfabric's classes that it imports or defines, and module aliases
  (``np.ndarray``), are written with their full path in the signatures
  autodoc renders, so that ``Link`` links to the one class the module means
  (``Simulation`` is documented both as ``ibfabric.Simulation`` and
  ``ibfabric.simulation.Simulation``) and ``np.ndarray`` to numpy's reference.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import functools
import importlib
import importlib.util
import inspect
import os
import re
import sys
import tomllib
from pathlib import Path

from docutils import nodes
from pygments.lexer import RegexLexer, bygroups, words
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text, Whitespace
from sphinx.locale import _
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[2]

# ------------------------------------------------------------------ NED


class NedLexer(RegexLexer):
    """Pygments lexer of the NED-like topology language (docs/ned-language.md)."""

    name = "NED"
    aliases = ["ned"]
    filenames = ["*.ned"]

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"//.*?$", Comment.Single),
            (words(("package", "import", "network", "simple", "module", "channel", "moduleinterface",
                    "channelinterface", "extends", "like", "parameters", "gates", "submodules", "connections",
                    "allowunconnected", "for", "if", "default", "volatile", "input", "output", "inout",
                    "sizeof", "index", "this"), suffix=r"\b"), Keyword),
            (words(("bool", "double", "int", "string", "xml"), suffix=r"\b"), Keyword.Type),
            (words(("true", "false"), suffix=r"\b"), Keyword.Constant),
            (r"(@)([A-Za-z_]\w*)", bygroups(Name.Decorator, Name.Decorator)),
            (r'"(\\\\|\\"|[^"])*"', String.Double),
            (r"\d+(\.\d+)?([eE][+-]?\d+)?[A-Za-z]*(/[A-Za-z]+)?", Number),
            (r"<-->|-->|<--|\.\.|==|!=|<=|>=|&&|\|\||[-+*/%<>=!?:^]", Operator),
            (r"[{}()\[\];,.]", Punctuation),
            (r"[A-Za-z_]\w*", Name),
            (r".", Text),
        ],
    }


# ------------------------------------------------------------------ CLI reference


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """``(name, one-line help, parser)`` of each subcommand of *parser*, in the order of its help."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            seen = set()
            for name, sub in action.choices.items():
                if id(sub) not in seen:  # an alias names the same parser again
                    seen.add(id(sub))
                    out.append((name, helps.get(name, ""), sub))
    return out


def commands(parser: argparse.ArgumentParser, prog: str = "") -> list[tuple[str, str, argparse.ArgumentParser]]:
    """Every command and subcommand of *parser*, depth first: ``(full name, one-line help, parser)``."""
    prog = prog or parser.prog
    out = [(prog, "", parser)]
    for name, help_, sub in _subcommands(parser):
        found = commands(sub, f"{prog} {name}")
        found[0] = (found[0][0], help_, sub)
        out += found
    return out


@contextlib.contextmanager
def _columns(width: int):
    """Format argparse help at *width* columns, whatever the terminal of the build is."""
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)
    try:
        yield
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


class CliDirective(SphinxDirective):
    """``.. ibfabric-cli:: module:function``: a section per command of the parser the function builds."""

    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        modname, _, funcname = self.arguments[0].partition(":")
        parser = getattr(importlib.import_module(modname), funcname)()
        self.env.note_dependency(inspect.getsourcefile(sys.modules[modname]))
        out: list[nodes.Node] = []
        with _columns(88):
            for name, help_, sub in commands(parser):
                section = nodes.section(ids=[nodes.make_id("command " + name)], names=[nodes.fully_normalize_name(name)])
                section += nodes.title("", "", nodes.literal(name, name))
                if help_:
                    section += nodes.paragraph(help_, help_)
                text = sub.format_help()
                section += nodes.literal_block(text, text, language="text")
                self.state.document.note_implicit_target(section, section)
                out.append(section)
        return out


# ------------------------------------------------------------------ links to source files


@functools.cache
def _package_dirs() -> dict[str, str]:
    """Repository folder -> package, from pyproject.toml (``components`` -> ``ibfabric.components``)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    dirs = config["tool"]["setuptools"]["package-dir"]
    return {folder: package for package, folder in dirs.items()}


def module_of(path: str) -> str | None:
    """The module a repository path holds (``plugins/hookspecs.py`` -> ``ibfabric.plugins.hookspecs``)."""
    if not path.endswith(".py"):
        return None
    folder, _, stem = path[:-3].rpartition("/")
    package = _package_dirs().get(folder)
    if package is None:
        return None
    return package if stem == "__init__" else f"{package}.{stem}"


def api_pages(srcdir: Path) -> dict[str, str]:
    """Module -> ``page#label`` of the API page section that documents it (its label: ``mod-<module>``)."""
    out = {}
    for page in sorted((srcdir / "api").glob("*.rst")):
        for mod in re.findall(r"^\.\. _mod-(\S+):$", page.read_text(encoding="utf-8"), flags=re.M):
            out.setdefault(mod, f"api/{page.stem}.rst#mod-{mod}")
    return out


def source_links(app, docname: str, source: list[str]) -> None:
    """Point a Markdown page's relative links to repository ``.py`` files at their API pages.

    ``[hookspecs](../plugins/hookspecs.py)`` opens the file on GitHub; on the
    site it opens the section of the API page that documents the module.
    Only the text Sphinx reads is rewritten, never the file.
    """
    if app.env.doc2path(docname).suffix != ".md":
        return
    up = "../" * docname.count("/")  # from the page's folder back to docs/
    pages = api_pages(Path(app.srcdir))

    def replace(match: re.Match) -> str:
        module = module_of(match.group(1))
        if module not in pages:
            return match.group(0)  # left to Sphinx, which warns about a link it cannot follow
        return f"]({up}{pages[module]})"

    source[0] = re.sub(r"\]\(" + re.escape("../" + up) + r"([^)#\s]+)\)", replace, source[0])


# ------------------------------------------------------------------ names imported for type checking only


@functools.cache
def type_checking_names(module_name: str) -> dict[str, str]:
    """Name -> full path of what *module_name* imports under ``if TYPE_CHECKING:``."""
    module = sys.modules.get(module_name)
    try:
        tree = ast.parse(inspect.getsource(module))
    except (TypeError, OSError):
        return {}
    package = module_name if hasattr(module, "__path__") else module_name.rpartition(".")[0]
    out = {}
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for imp in node.body:
                if isinstance(imp, ast.ImportFrom):
                    base = importlib.util.resolve_name("." * imp.level + (imp.module or ""), package)
                    for alias in imp.names:
                        out[alias.asname or alias.name] = f"{base}.{alias.name}"
                elif isinstance(imp, ast.Import):
                    for alias in imp.names:
                        if alias.asname:
                            out[alias.asname] = alias.name
    return out


@functools.cache
def ibfabric_classes(module_name: str) -> dict[str, str]:
    """Name -> full path of the classes of ibfabric's public modules that *module_name* binds.

    A class of a private module (``_common``) is left to Sphinx, which finds
    it where it is documented, if anywhere.
    """
    out = {}
    for name, value in vars(sys.modules[module_name]).items():
        path = getattr(value, "__module__", None) or ""
        if (inspect.isclass(value) and path.split(".")[0] == "ibfabric" and "<" not in value.__qualname__
                and not any(part.startswith("_") for part in path.split("."))):
            out[name] = f"{path}.{value.__qualname__}"
    return out


def signature_module(obj) -> str | None:
    """The module whose names the annotations of *obj*'s signature are: for a class, that of the
    ``__init__`` (or ``__new__``) it inherits (``IBNode`` shows ``Module.__init__``'s)."""
    if inspect.isclass(obj):
        for klass in inspect.getmro(obj):
            if klass is not object and ("__init__" in vars(klass) or "__new__" in vars(klass)):
                return klass.__module__
    return getattr(obj, "__module__", None)


def qualify_signature(app, what, name, obj, options, signature, return_annotation):
    """Write type-checking imports, ibfabric's classes and module aliases of a signature with their full path."""
    module_name = signature_module(obj)
    if not module_name or module_name not in sys.modules or (signature is None and return_annotation is None):
        return None
    names = {**ibfabric_classes(module_name), **type_checking_names(module_name)}  # a module alias: nx -> networkx
    module = sys.modules.get(module_name)
    aliases = {name: value.__name__ for name, value in vars(module).items()
               if inspect.ismodule(value) and name != value.__name__}  # np -> numpy
    aliases.update({name: names.pop(name) for name in list(names) if "." not in names[name]})
    if not names and not aliases:
        return None
    pattern = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, [*names, *aliases])) + r")\b(\.?)")

    def full(m: re.Match) -> str:
        name, dot = m.groups()
        if dot:
            return aliases[name] + dot if name in aliases else m.group(0)
        return names.get(name, m.group(0))

    def qualify(text):
        return None if text is None else pattern.sub(full, text)

    return qualify(signature), qualify(return_annotation)


def drop_object_base(app, name, obj, options, bases: list) -> None:
    """Leave ``object`` out of the bases a class lists (``Bases: object`` says nothing)."""
    bases[:] = [base for base in bases if base is not object]


def drop_empty_bases(app, doctree) -> None:
    """Remove the ``Bases:`` line of a class left without bases by :func:`drop_object_base`."""
    bases_label = _("Bases: %s") % ""
    for para in list(doctree.findall(nodes.paragraph)):
        if para.astext().strip() == bases_label.strip():
            para.parent.remove(para)


# ------------------------------------------------------------------ build time


def cache_numpydoc_template() -> None:
    """Compile numpydoc's docstring template once per build instead of once per docstring.

    numpydoc builds a new jinja environment, and so compiles its template
    again, for each of the ~1400 docstrings of the API reference: a sixth of
    the build.  The template is the same every time, so the first one compiled
    is kept.  Without the ``SandboxedEnvironment`` this relies on (another
    numpydoc), nothing is changed.
    """
    import numpydoc.docscrape_sphinx as scrape

    base = getattr(scrape, "SandboxedEnvironment", None)
    if base is None or getattr(base, "_ibfabric_cached", False):
        return
    compiled: dict[str, object] = {}

    class CachedEnvironment(base):
        _ibfabric_cached = True

        def get_template(self, name, *args, **kwargs):
            if not isinstance(name, str) or args or kwargs:
                return super().get_template(name, *args, **kwargs)
            if name not in compiled:
                compiled[name] = super().get_template(name)
            return compiled[name]

    scrape.SandboxedEnvironment = CachedEnvironment


def setup(app):
    cache_numpydoc_template()
    app.add_lexer("ned", NedLexer)
    app.add_directive("ibfabric-cli", CliDirective)
    app.connect("source-read", source_links)
    app.connect("autodoc-process-signature", qualify_signature)
    app.connect("autodoc-process-bases", drop_object_base)
    app.connect("doctree-read", drop_empty_bases)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
