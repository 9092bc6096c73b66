"""Sphinx configuration of the ibfabric documentation site.

Build it with ``pip install -e '.[docs]' && sphinx-build -W docs docs/_build/html``.

Why Sphinx rather than MkDocs with mkdocstrings: our docstrings follow the
NumPy convention, which numpydoc renders natively (Parameters, Returns,
Raises, Examples, Notes, References as they are written); the hook reference
is autodoc of the pluggy hookspecs module, one ``autofunction`` per hook, the
way pytest renders its own hook reference; the CLI reference comes straight
from the argparse parser (sphinx-argparse does that; we use a 60-line
directive in docs/_ext instead, because sphinx-argparse reads help strings as
reStructuredText and ours are plain text with ``**.load`` in them); and
intersphinx links our signatures to the numpy, networkx, pluggy and Python
references.  MyST keeps the narrative pages in Markdown, readable on GitHub
as they are.
"""

from __future__ import annotations

import sys
from pathlib import Path

import ibfabric

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

project = "ibfabric"
author = "the ibfabric authors"
copyright = "the ibfabric authors"  # noqa: A001 (Sphinx's name)
release = version = ibfabric.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "ibfabric_sphinx",  # docs/_ext: the NED lexer, the CLI reference, links to source files
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
# Only what is not a page: the build output and the vendored inventories.  Every .md page
# anywhere under docs/ is a page, and one that no toctree lists fails the build (-W).
exclude_patterns = ["_build", "_inventories", "Thumbs.db", ".DS_Store"]
# No sphinx.ext.viewcode: its highlighted copy of every module costs a fifth of the build that the
# test suite runs; the API pages are the docstrings, the source is in the repository.

# ------------------------------------------------------------------ Markdown (MyST)

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3  # the pages link to their own sections as #heading-text

# ------------------------------------------------------------------ API reference

autodoc_member_order = "bysource"
autodoc_default_options = {"show-inheritance": True}
autodoc_typehints = "signature"
python_use_unqualified_type_names = True
add_module_names = False  # the pages group objects by module, under its name
numpydoc_show_class_members = False  # autodoc lists the members; numpydoc's tables would repeat them
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = False

# ------------------------------------------------------------------ intersphinx, offline

# CI has no network but the package registries: the inventories are vendored, small files of the
# objects our pages and signatures name (written by docs/make_inventories.py), and intersphinx
# reads those files only.
intersphinx_mapping = {
    name: (url, str(DOCS / "_inventories" / f"{name}.inv"))
    for name, url in {
        "python": "https://docs.python.org/3/",
        "numpy": "https://numpy.org/doc/stable/",
        "networkx": "https://networkx.org/documentation/stable/",
        "pluggy": "https://pluggy.readthedocs.io/en/stable/",
    }.items()
}
intersphinx_cache_limit = -1
intersphinx_timeout = 1

# ------------------------------------------------------------------ HTML

html_theme = "alabaster"
html_title = f"ibfabric {release}"
html_static_path: list[str] = []
html_theme_options = {"description": "An OMNeT++-style InfiniBand fabric simulator in pure Python"}
