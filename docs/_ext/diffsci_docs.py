"""Sphinx extension of the diffsci site: pages generated from the repository at build time.

Three kinds of page are stubs in ``docs/`` whose text this extension supplies when Sphinx reads
them (the ``source-read`` event), so they cannot drift from the code:

* ``api/<module>``: an autosummary table and the autodoc entries of every name in the module's
  ``__all__`` (tables only for the NumPy/SciPy-compatible namespaces, whose functions carry
  NumPy's docstrings);
* ``derivations/<package>``: the package's ``DERIVATIONS.md``, with its indented display lines
  (Unicode maths, aligned by spaces) kept as aligned blocks and its links to repository files
  pointed at the source pages;
* ``examples/<section>``: one section per example script, with its docstring, its source, and —
  when ``make demo`` has written ``gallery/`` — its RESULT line and figures.

At ``builder-inited`` every ``>>>`` example of the top-level pages, the user guide and the
tutorials is run with
:mod:`doctest` (in one namespace per page, in page order); a failure stops the build.
"""

from __future__ import annotations

import ast
import doctest
import enum
import functools
import importlib
import inspect
import json
import os
import re
import types
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

LOGGER = logging.getLogger(__name__)

DOCS = Path(__file__).resolve().parent.parent
ROOT = DOCS.parent
GALLERY = ROOT / "gallery"

# -- API reference ----------------------------------------------------------------------------

# Namespaces that mirror NumPy/SciPy: their functions carry NumPy's or SciPy's docstrings, so the
# reference lists them (with the first line of each docstring) instead of repeating those pages.
TABLE_ONLY = {"diffsci.numpy", "diffsci.numpy.linalg", "diffsci.fft"}

# page docname -> (module, intro)
API_PAGES: dict[str, tuple[str, str]] = {
    "api/diffsci": ("diffsci", "The core: transforms, custom rules, pytrees, checkpointing."),
    "api/diffsci.numpy": (
        "diffsci.numpy",
        "NumPy's namespace over traced arrays. Plain ``import numpy as np`` code dispatches to "
        "these through ``__array_ufunc__``/``__array_function__``; each function takes NumPy's "
        "arguments (see NumPy's documentation) and is differentiable in the arguments listed in "
        "its docstring.",
    ),
    "api/diffsci.numpy.linalg": ("diffsci.numpy.linalg", "``numpy.linalg``, differentiable."),
    "api/diffsci.fft": ("diffsci.fft", "Every ``numpy.fft`` function, differentiable."),
    "api/diffsci.scipy": ("diffsci.scipy", "SciPy's namespaces over traced arrays."),
    "api/diffsci.scipy.special": ("diffsci.scipy.special", "``scipy.special``, differentiable."),
    "api/diffsci.scipy.linalg": ("diffsci.scipy.linalg", "``scipy.linalg``, differentiable."),
    "api/diffsci.scipy.stats": ("diffsci.scipy.stats", "``scipy.stats`` distributions."),
    "api/diffsci.scipy.integrate": (
        "diffsci.scipy.integrate",
        "ODE solvers and quadrature with gradients.",
    ),
    "api/diffsci.scipy.optimize": (
        "diffsci.scipy.optimize",
        "Root finding and minimisation with implicit-function-theorem gradients.",
    ),
    "api/diffsci.scipy.interpolate": (
        "diffsci.scipy.interpolate",
        "``scipy.interpolate``, differentiable in data and query points.",
    ),
    "api/diffsci.scipy.signal": ("diffsci.scipy.signal", "``scipy.signal``, differentiable."),
    "api/diffsci.extend": ("diffsci.extend", "What an author of new rules and primitives needs."),
    "api/diffsci.nn": ("diffsci.nn", "Small neural-network layers whose parameters are pytrees."),
    "api/diffsci.optim": ("diffsci.optim", "Optimisers and a bridge to ``scipy.optimize``."),
    "api/diffsci.testing": ("diffsci.testing", "The gradient checker every test uses."),
    "api/raytrace": ("raytrace", "Differentiable ray tracer."),
    "api/quantum": ("quantum", "Differentiable state-vector simulator."),
    "api/sde": ("sde", "SDE solvers with gradients."),
    "api/finance": ("finance", "Pricing, Greeks, calibration and yield curves."),
    # Optional integrations last: documenting them imports dask.
    "api/diffsci.interop": (
        "diffsci.interop",
        "Bridges to PyTorch and JAX (optional: ``pip install -e '.[interop]'``; torch and jax are "
        "imported on first use).",
    ),
    "api/diffsci.distributed": (
        "diffsci.distributed",
        "Scale-out on Dask (optional: ``pip install -e '.[distributed]'``).",
    ),
}


def public_names(module: types.ModuleType) -> list[str]:
    """``module.__all__``, or its public non-module attributes when it has none."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = sorted(
            n
            for n, v in vars(module).items()
            if not n.startswith("_") and not isinstance(v, types.ModuleType)
        )
    return list(names)


def _kind(obj: object) -> str:
    if isinstance(obj, types.ModuleType):
        return "module"
    if inspect.isclass(obj):
        if issubclass(obj, BaseException):
            return "exception"
        return "class"
    if inspect.isroutine(obj) or isinstance(obj, functools.partial):
        return "function"
    if callable(obj):  # an instance that is called like a function (a distribution, a custom_vjp)
        return "object"
    return "data"


def _first_exporter(obj: object, modname: str) -> str | None:
    """The earlier API page's module that already documents ``obj`` (so this one is not indexed)."""
    for other, _ in API_PAGES.values():
        if other == modname:
            return None
        if other in TABLE_ONLY:
            continue
        module = importlib.import_module(other)
        for name in public_names(module):
            if getattr(module, name, None) is obj and not isinstance(obj, (int, float, str)):
                return f"{other}.{name}"
    return None


def _heading(text: str, char: str, over: bool = False) -> list[str]:
    line = char * len(text)
    return ([line] if over else []) + [text, line, ""]


def api_page(docname: str) -> str:
    """The reST text of one API page (see :data:`API_PAGES`)."""
    modname, intro = API_PAGES[docname]
    module = importlib.import_module(modname)
    names = public_names(module)
    objects = {n: getattr(module, n) for n in names}
    submodules = [n for n in names if _kind(objects[n]) == "module"]
    members = [n for n in names if n not in submodules]
    lines = _heading(f"``{modname}``", "=", over=True)
    lines += [f".. currentmodule:: {modname}", "", intro, ""]
    if submodules:
        lines += ["Submodules: " + ", ".join(_submodule_ref(modname, n) for n in submodules), ""]
    if not members:
        return "\n".join(lines) + "\n"
    # autosummary formats a signature for every entry, which fails on callable instances
    # (distributions); those and the constants get a plain table.
    tabled = [n for n in members if _kind(objects[n]) in ("function", "class", "exception")]
    others = [n for n in members if n not in tabled]
    if tabled:
        lines += [".. autosummary::", "   :nosignatures:", ""]
        lines += [f"   {n}" for n in tabled]
        lines.append("")
    if others:
        lines += [".. list-table::", "   :widths: 30 70", ""]
        for n in others:
            summary = escape_rst(_summary(objects[n])) if _kind(objects[n]) == "object" else ""
            value = f"``{_short_repr(objects[n], 60)}``" if not summary else summary
            lines += [f"   * - :py:obj:`{n}`", f"     - {value}"]
        lines.append("")
    if modname in TABLE_ONLY:
        return "\n".join(lines) + "\n"
    kinds = ("function", "object", "class", "exception", "data")
    groups: dict[str, list[str]] = {k: [] for k in kinds}
    for n in members:
        groups[_kind(objects[n])].append(n)
    titles = {
        "function": "Functions",
        "object": "Callable objects",
        "class": "Classes",
        "exception": "Exceptions",
        "data": "Constants",
    }
    directives = {
        "function": "autofunction",
        "object": "autodata",
        "class": "autoclass",
        "exception": "autoexception",
    }
    for kind in titles:
        if not groups[kind]:
            continue
        lines += _heading(titles[kind], "-")
        for n in groups[kind]:
            obj = objects[n]
            if kind == "data":
                lines += [f".. py:data:: {n}", f"   :value: {_short_repr(obj)}", ""]
                continue
            if kind == "object":  # autodata's signature hooks fail on callable instances
                first = _first_exporter(obj, modname)
                lines += [f".. py:data:: {n}"] + (["   :no-index:"] if first else []) + [""]
                doc = join_wrapped(escape_rst(_napoleon(inspect.getdoc(obj) or "")).split("\n"))
                lines += ["   " + d if d.strip() else "" for d in doc] + [""]
                continue
            lines.append(f".. {directives[kind]}:: {n}")
            if kind == "class":
                lines.append("   :members:")
                if issubclass(obj, enum.Enum):
                    lines.append("   :undoc-members:")
            if kind == "exception":
                lines.append("   :show-inheritance:")
            first = _first_exporter(obj, modname)
            if first:
                lines += ["   :no-index:", "", f"   The same object as :py:obj:`{first}`."]
            lines.append("")
    return "\n".join(lines) + "\n"


def _napoleon(doc: str) -> str:
    """A Google-style docstring as reST (what napoleon does for autodoc's entries)."""
    from sphinx.ext.napoleon import Config, GoogleDocstring

    return str(GoogleDocstring(doc, Config(napoleon_use_rtype=False)))


def _summary(obj: object) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.strip().split("\n\n", 1)[0].replace("\n", " ")


_LITERAL = re.compile(r"(``.+?``|:[\w:]+:`[^`]+`|`[^`]+`_?)")
_EMPHASIS = re.compile(r"(?<![\w*\\])(\*\*?)(?=\S)([^*]*?\S)\1(?![\w*])")


def escape_rst(text: str) -> str:
    """Escape what a docstring means as plain maths but reST reads as markup.

    Outside literals and roles: every ``|`` (``|x|`` is an absolute value, not a substitution) and
    every ``*`` that does not open or close an ``*emphasis*`` or ``**strong**`` pair on the line
    (``a * b``, ``x**2``, ``*args``).
    """
    out = []
    for line in text.split("\n"):
        bullet = re.match(r"^\s*[*-] ", line)
        if bullet:  # a list item's marker stays a marker
            out.append(bullet.group(0) + escape_rst(line[bullet.end() :]))
            continue
        pieces = _LITERAL.split(line)
        for k in range(0, len(pieces), 2):  # even pieces are outside literals
            piece = pieces[k].replace("|", "\\|")
            kept = []
            last = 0
            for m in _EMPHASIS.finditer(piece):
                kept.append(piece[last : m.start()].replace("*", "\\*"))
                kept.append(m.group(0))
                last = m.end()
            kept.append(piece[last:].replace("*", "\\*"))
            pieces[k] = "".join(kept)
        out.append("".join(pieces))
    return "\n".join(out)


# ``:ref:`text <label>``` and ``:ref:`label``` of NumPy's docstrings point into NumPy's manual.
_REF = re.compile(r":ref:`(?:([^`<]*?)\s*<[^`>]+>|([^`]+))`")
_FIELD = re.compile(r"^:[^:`]+:(\s|$)")


def join_wrapped(lines: list[str]) -> list[str]:
    """Join an indented line onto a paragraph of two or more lines that it continues.

    An indented line after a multi-line paragraph is always a reST error ("unexpected
    indentation"); in a docstring it is a wrapped item of a plain list such as
    ``name: text`` / ``    more text``. Code blocks (after ``::``) and doctest lines are kept.
    """
    out: list[str] = []
    in_code = False
    code_indent = 0
    para = 0  # lines in the current paragraph at one indentation
    field_indent = None  # the indentation of the field list being read, if any
    for line in lines:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if re.match(r"^:(param|type)\s*:", stripped):
            continue  # napoleon's entry for a bare ``*`` in an argument list
        if field_indent is not None and stripped:
            if indent == field_indent and not _FIELD.match(stripped):
                out.append("")  # a field list must end with a blank line
                field_indent = None
            elif indent < field_indent:
                field_indent = None
        elif not stripped:
            field_indent = None
        if _FIELD.match(stripped):
            field_indent = indent
            if out and out[-1].strip().startswith(".. "):
                out.append("")  # a field right after a directive (typehints' :rtype: after a
                # rubric) would end the directive without a blank line
        if in_code and stripped and indent <= code_indent:
            in_code = False
        if not stripped:
            para = 0
            out.append(line)
            continue
        if in_code or stripped.startswith((">>>", "...", ".. ")):
            para = 0
            out.append(line)
            continue
        prev = out[-1] if out else ""
        prev_indent = len(prev) - len(prev.lstrip())
        if para >= 2 and indent > prev_indent and not prev.rstrip().endswith("::"):
            out[-1] = prev.rstrip() + " " + stripped
        else:
            para = para + 1 if para and indent == prev_indent else 1
            out.append(line)
        if stripped.endswith("::"):
            in_code, code_indent, para = True, indent, 0
    return out


def on_docstring(app, what, name, obj, options, lines: list[str]) -> None:
    """``autodoc-process-docstring``: :func:`join_wrapped`, then :func:`escape_rst` on every
    line outside code blocks."""
    lines[:] = [_REF.sub(lambda m: m.group(1) or m.group(2), line) for line in join_wrapped(lines)]
    dump = os.environ.get("DIFFSCI_DOCS_DUMP")
    if dump:
        path = Path(dump) / "docstrings" / f"{name}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines), encoding="utf-8")
    in_code = False
    code_indent = 0
    for i, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if in_code and stripped and indent <= code_indent:
            in_code = False
        if in_code or stripped.startswith(">>>") or stripped.startswith("..."):
            continue
        lines[i] = escape_rst(line)
        if stripped.endswith("::") or stripped.startswith(".. code"):
            in_code, code_indent = True, indent


def _short_repr(obj: object, limit: int = 200) -> str:
    text = repr(obj).replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _submodule_ref(parent: str, name: str) -> str:
    full = f"{parent}.{name}"
    if f"api/{full}" in API_PAGES:
        return f":doc:`{full} <{full}>`"
    return f"``{full}``"


# -- Derivations ------------------------------------------------------------------------------

DERIVATION_PAGES = {
    "derivations/diffsci": "diffsci/DERIVATIONS.md",
    "derivations/nn": "diffsci/nn/DERIVATIONS.md",
    "derivations/raytrace": "raytrace/DERIVATIONS.md",
    "derivations/quantum": "quantum/DERIVATIONS.md",
    "derivations/sde": "sde/DERIVATIONS.md",
    "derivations/finance": "finance/DERIVATIONS.md",
    "architecture-jit": "diffsci/ARCHITECTURE_JIT.md",  # not a derivation, included the same way
}

_FENCE = re.compile(r"^\s*(```|~~~)")
_LIST_ITEM = re.compile(r"^\s*([-*+]|\d+[.)])\s")


def fence_displays(text: str) -> str:
    """Keep a derivation's display lines aligned.

    The derivations write their equations as Unicode text on lines indented by two or more
    spaces after a blank line, aligned with spaces (GitHub folds two-space lines into the
    paragraph). Each such run of lines becomes a ``{code-block} text`` block with the class
    ``display``; lines inside existing fences, list items and their continuations are untouched.
    """
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    in_fence = False
    previous_blank = True
    in_list = False
    while i < len(lines):
        line = lines[i]
        if _FENCE.match(line):
            in_fence = not in_fence
        if in_fence or _FENCE.match(line):
            out.append(line)
            previous_blank = False
            i += 1
            continue
        if _LIST_ITEM.match(line):
            in_list = True
        elif not line.strip():
            pass
        elif not line.startswith(" "):
            in_list = False
        if previous_blank and line.startswith("  ") and line.strip() and not in_list:
            block = []
            while i < len(lines) and lines[i].startswith("  ") and lines[i].strip():
                block.append(lines[i])
                i += 1
            indent = min(len(b) - len(b.lstrip(" ")) for b in block)
            out += ["```{code-block} text", ":class: display", ""]
            out += [b[indent:] for b in block]
            out += ["```"]
            previous_blank = False
            continue
        out.append(line)
        previous_blank = not line.strip()
        i += 1
    return "\n".join(out) + "\n"


_LINK = re.compile(r"\]\((?!https?:|#|mailto:)([^)\s]+)\)")


def derivation_page(docname: str) -> str:
    """A package's DERIVATIONS.md, display lines fenced, repository links made absolute."""
    rel = Path(DERIVATION_PAGES[docname])
    text = (ROOT / rel).read_text(encoding="utf-8")

    def link(match: re.Match[str]) -> str:
        target = (ROOT / rel.parent / match.group(1)).resolve()
        try:
            shown = target.relative_to(ROOT).as_posix()
        except ValueError:
            shown = match.group(1)
        return f"]({_REPO_MARK}{shown})"

    text = _LINK.sub(link, text)
    return _tidy_headings(fence_displays(text))


_REPO_MARK = "repo:"


def _tidy_headings(text: str) -> str:
    """Headings at most one level below the previous one (MyST flags jumps); links into the
    repository (the site has no copy of those files) become the link text and the file's name.
    """
    out = []
    last = 0
    in_fence = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        m = re.match(r"^(#+)\s", line) if not in_fence else None
        if m:
            level = min(len(m.group(1)), last + 1)
            line = "#" * level + line[len(m.group(1)) :]
            last = level
        out.append(line)
    text = "\n".join(out) + "\n"
    return re.sub(r"\[([^\]]*)\]\(repo:([^)]*)\)", r"\1 (`\2`)", text)


# -- Gallery ----------------------------------------------------------------------------------

GALLERY_SECTIONS = {
    "examples/core": ("", "The core: diffsci"),
    "examples/raytrace": ("raytrace", "raytrace: inverse rendering"),
    "examples/quantum": ("quantum", "quantum: variational circuits"),
    "examples/sde": ("sde", "sde: stochastic differential equations"),
    "examples/finance": ("finance", "finance: pricing, Greeks, calibration"),
    "examples/interop": ("interop", "interop: PyTorch and JAX bridges"),
}


def _examples():
    import sys

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from examples.run_all import discover

    return discover()


def _results() -> dict[str, dict]:
    try:
        stored = json.loads((GALLERY / "results.json").read_text(encoding="utf-8"))
        return {entry["name"]: entry for entry in stored}
    except (OSError, ValueError, TypeError, KeyError):
        return {}


def _section_of(name: str) -> str:
    return name.split("/", 1)[0] if "/" in name else ""


def gallery_page(docname: str) -> str:
    """One gallery section: per example, its docstring, figures, RESULT and source."""
    folder, title = GALLERY_SECTIONS[docname]
    examples = [e for e in _examples() if _section_of(e.name) == folder]
    results = _results()
    lines = _heading(title, "=", over=True)
    if not (GALLERY / "results.json").exists():
        lines += [
            ".. note::",
            "",
            "   The gallery has not been run in this checkout, so this page shows each example's",
            "   description and source only. ``make demo`` (or ``python -m examples -k NAME``)",
            "   runs the examples in quick mode and writes ``gallery/``; rebuild the site with",
            "   ``make docs`` to see their figures and RESULT lines here.",
            "",
        ]
    if not examples:
        lines += ["No examples in this section yet.", ""]
    for e in examples:
        doc = ast.get_docstring(ast.parse(e.path.read_text(encoding="utf-8"))) or ""
        body = doc.split("\n", 1)[1].strip() if "\n" in doc else ""
        rel = e.path.relative_to(ROOT).as_posix()
        lines += [f".. _gallery-{e.name.replace('/', '-').replace('_', '-')}:", ""]
        lines += _heading(f"{e.name}", "-")
        lines += [f"**{e.title}**", ""]
        if body:
            lines += ["\n".join(join_wrapped(escape_rst(body).split("\n"))), ""]
        outcome = results.get(e.name)
        if outcome:
            mode = "--full" if outcome.get("full") else "quick"
            status = "ok" if outcome.get("ok") else f"failed: {outcome.get('reason', '')}"
            lines += [f"*Last run ({mode}): {status}, {outcome.get('seconds', 0):.1f} s.*", ""]
            if outcome.get("result"):
                lines += [".. code-block:: text", "   :class: result", ""]
                lines += [f"   RESULT: {outcome['result']}", ""]
            for image in outcome.get("images", []):
                if (GALLERY / image).is_file():
                    lines += [f".. figure:: /../gallery/{image}", f"   :alt: {image}", ""]
        lines += [f"Source: :download:`{rel} </../{rel}>`", ""]
        lines += [".. raw:: html", "", "   <details><summary>Show the source</summary>", ""]
        lines += [f".. literalinclude:: /../{rel}", "   :language: python", ""]
        lines += [".. raw:: html", "", "   </details>", ""]
    return "\n".join(lines) + "\n"


# -- Runnable examples in the guide -----------------------------------------------------------

DOCTEST_FOLDERS = (".", "guide", "tutorials")
DOCTEST_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def doctest_text(text: str) -> str:
    """A Markdown page with its fence lines blanked, so an output ends where its fence does."""
    return "\n".join("" if _FENCE.match(line) else line for line in text.splitlines()) + "\n"


def run_page_doctests(path: Path) -> tuple[int, int, str]:
    """Run the ``>>>`` examples of one page; returns (failures, tries, report)."""
    import io

    text = doctest_text(path.read_text(encoding="utf-8"))
    parser = doctest.DocTestParser()
    name = path.relative_to(DOCS).as_posix()
    test = parser.get_doctest(text, {"__name__": "__docs__"}, name, str(path), 0)
    report = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=DOCTEST_FLAGS)
    runner.run(test, out=report.write)
    result = runner.summarize(verbose=False)
    return result.failed, result.attempted, report.getvalue()


def run_doctests(app: Sphinx) -> None:
    if not app.config.diffsci_run_doctests:
        return
    failures = []
    total = 0
    for folder in DOCTEST_FOLDERS:
        for path in sorted((DOCS / folder).glob("*.md")):
            failed, tried, report = run_page_doctests(path)
            total += tried
            if failed:
                failures.append(report)
    if failures:
        raise ExtensionError(
            "examples in the guide failed (docs/_ext/diffsci_docs.py runs them):\n"
            + "\n".join(failures)
        )
    LOGGER.info(f"diffsci_docs: {total} guide and tutorial examples passed")


# -- Maths without MathJax ------------------------------------------------------------------


def _visit_math(self, node) -> None:
    """HTML for a ``:math:`` node (the few that NumPy's docstrings bring): its TeX as text.

    The site ships nothing that would be fetched from the network, and the project's own maths is
    Unicode text, so TeX is shown as written rather than typeset by MathJax.
    """
    from docutils import nodes

    self.body.append(f'<code class="math">{self.encode(node.astext())}</code>')
    raise nodes.SkipNode


def _visit_displaymath(self, node) -> None:
    from docutils import nodes

    self.body.append(f'<pre class="math">{self.encode(node.astext())}</pre>')
    raise nodes.SkipNode


# -- Wiring -----------------------------------------------------------------------------------


def on_source_read(app: Sphinx, docname: str, source: list[str]) -> None:
    if docname in API_PAGES:
        source[0] = api_page(docname)
    elif docname in DERIVATION_PAGES:
        source[0] = derivation_page(docname)
    elif docname in GALLERY_SECTIONS:
        source[0] = gallery_page(docname)
    else:
        return
    dump = os.environ.get("DIFFSCI_DOCS_DUMP")  # a folder: write the generated text there
    if dump:
        path = Path(dump) / f"{docname}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source[0], encoding="utf-8")


def on_builder_inited(app: Sphinx) -> None:
    run_doctests(app)


def setup(app: Sphinx) -> dict:
    app.add_config_value("diffsci_run_doctests", True, "env")
    app.add_html_math_renderer(
        "diffsci_text", (_visit_math, None), (_visit_displaymath, None)
    )
    app.connect("builder-inited", on_builder_inited)
    app.connect("source-read", on_source_read)
    app.connect("autodoc-process-docstring", on_docstring, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
