"""Count the lines of code of diffsci's AD core (no docstrings, comments or blank lines).

The core is what every gradient goes through: recording (``_core.py``), in-place
writes (``_inplace.py``), the reverse and forward transforms (``_api.py``,
``_forward.py``), pytrees (``_tree.py``), custom rules (``_custom.py``) and the
ndarray face of tracers (``numpy/_tracer_methods.py``).  Rule tables
and domain packages are not counted.  Keep this number in view (STYLE.md):
shrink it by deleting concepts, not newlines.

Usage: ``python tools/core_size.py [--max N]`` (exit 1 when the core exceeds N).
"""

from __future__ import annotations

import argparse
import ast
import io
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = [
    "diffsci/_core.py",
    "diffsci/_api.py",
    "diffsci/_forward.py",
    "diffsci/_inplace.py",
    "diffsci/_tree.py",
    "diffsci/_custom.py",
    "diffsci/numpy/_tracer_methods.py",
]


def code_lines(source: str) -> int:
    """Number of lines holding code, not counting docstrings, comments and blank lines."""
    doc_lines = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                doc_lines.update(range(body[0].lineno, body[0].end_lineno + 1))
    lines = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                        tokenize.DEDENT, tokenize.ENDMARKER):
            continue
        lines.update(range(tok.start[0], tok.end[0] + 1))
    return len(lines - doc_lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=None, help="fail above this many lines")
    args = parser.parse_args(argv)
    total = 0
    for rel in CORE:
        n = code_lines((ROOT / rel).read_text())
        total += n
        print(f"{n:6d}  {rel}")
    print(f"{total:6d}  total (AD core, code lines)")
    if args.max is not None and total > args.max:
        print(f"core_size: {total} lines exceed the budget of {args.max}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
