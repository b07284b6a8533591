"""The helpers of the documentation build (``docs/_ext/diffsci_docs.py``), without Sphinx runs."""

import importlib
import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("sphinx")

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("diffsci_docs", ROOT / "docs/_ext/diffsci_docs.py")
docs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(docs)


def test_escape_rst_keeps_literals_emphasis_and_bullets():
    assert docs.escape_rst("|x| = a * b") == "\\|x\\| = a \\* b"
    assert docs.escape_rst("``a * |b|`` and *this*") == "``a * |b|`` and *this*"
    assert docs.escape_rst("x**2 and **bold**") == "x\\*\\*2 and **bold**"
    assert docs.escape_rst("* item with a * b") == "* item with a \\* b"
    assert docs.escape_rst(":func:`f` |g|") == ":func:`f` \\|g\\|"


def test_join_wrapped_repairs_only_errors():
    wrapped = ["Attributes:", "    a: one", "    b: two", "        more of two", ""]
    assert docs.join_wrapped(wrapped) == ["Attributes:", "    a: one",
                                          "    b: two more of two", ""]
    literal = ["Example::", "", "    code", "        indented code"]
    assert docs.join_wrapped(literal) == literal
    fields = [":param x: a", "Text after the field list."]
    assert docs.join_wrapped(fields) == [":param x: a", "", "Text after the field list."]
    assert docs.join_wrapped([":param :", ":param y: b"]) == [":param y: b"]
    rubric = [".. rubric:: Example", ":rtype: None", "", ">>> 1"]
    assert docs.join_wrapped(rubric) == [".. rubric:: Example", "", ":rtype: None", "", ">>> 1"]


def test_fence_displays_keeps_alignment_and_lists():
    text = "Para:\n\n  a = b + c      (1)\n  d = e          (2)\n\n- item\n  continued\n"
    out = docs.fence_displays(text)
    block = "a = b + c      (1)\nd = e          (2)"
    assert f"```{{code-block}} text\n:class: display\n\n{block}\n```" in out
    assert "- item\n  continued" in out


def test_derivation_links_become_file_names():
    text = docs._tidy_headings("# T\n\n### deep\n\nsee [the kernel](repo:diffsci/_kernels.py)\n")
    assert "## deep" in text
    assert "the kernel (`diffsci/_kernels.py`)" in text


def test_every_package_page_lists_its_all():
    for docname, (modname, _) in docs.API_PAGES.items():
        if modname in ("diffsci.interop", "diffsci.distributed"):
            continue  # optional; importing dask takes seconds
        module = importlib.import_module(modname)
        page = docs.api_page(docname)
        for name in docs.public_names(module):
            assert name in page, f"{modname}.{name} missing from {docname}"
    for docname in list(docs.API_PAGES) + list(docs.DERIVATION_PAGES):
        assert (ROOT / "docs" / f"{docname}.rst").exists() or (
            ROOT / "docs" / f"{docname}.md"
        ).exists(), docname


def test_guide_examples_run():
    failed, tried, report = docs.run_page_doctests(ROOT / "docs/guide/pytrees.md")
    assert tried > 5 and failed == 0, report
