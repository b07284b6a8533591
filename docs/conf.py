"""Sphinx configuration of the diffsci documentation site (``make docs``).

The site builds offline from the repository: MyST Markdown pages, an API reference generated from
each package's ``__all__`` (``_ext/diffsci_docs.py``), the packages' ``DERIVATIONS.md`` included
as pages, and the example gallery as pages (figures appear when ``gallery/`` has been built by
``make demo``). Maths in the derivations is Unicode text, so no MathJax (nothing is fetched).
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS / "_ext"))

import diffsci  # noqa: E402

project = "diffsci"
author = "the diffsci authors"
copyright = "the diffsci authors"
release = diffsci.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx_autodoc_typehints",
    "diffsci_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store"]
templates_path = []

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

autodoc_default_options = {"members": False, "undoc-members": False}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autosummary_generate = False
napoleon_google_docstring = True
napoleon_numpy_docstring = True
napoleon_use_rtype = False
typehints_fully_qualified = False
always_document_param_types = False

html_theme = "furo"
html_title = f"diffsci {release}"
html_static_path = ["_static"]
html_css_files = ["diffsci.css"]
html_favicon = "_static/favicon.svg"  # else browsers ask for /favicon.ico, a 404
html_show_sourcelink = True
html_copy_source = True
# No MathJax (nothing on the site is fetched from the network): the few TeX fragments of NumPy's
# docstrings are shown as text by the renderer in _ext/diffsci_docs.py.
html_math_renderer = "diffsci_text"
