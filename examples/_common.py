"""Helpers shared by the gallery's example scripts.

Every example uses the same three: :func:`parse_args` for ``--full``, :func:`gallery_dir` for where
figures go, and :func:`result` for the final ``RESULT:`` line that the runner collects.
:func:`save_figure` saves a matplotlib figure there under a name taken from the script.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
GALLERY_ENV = "DIFFSCI_GALLERY_DIR"


def gallery_dir() -> Path:
    """The folder examples write their figures to, created if missing.

    Returns:
        ``$DIFFSCI_GALLERY_DIR`` when set (the runner sets it), else ``<repo root>/gallery``.

    Example:
        >>> fig.savefig(gallery_dir() / "01_taylor_sin.png")
    """
    path = Path(os.environ.get(GALLERY_ENV) or REPO_ROOT / "gallery")
    path.mkdir(parents=True, exist_ok=True)
    return path


def parse_args(argv: list[str] | None = None, description: str | None = None) -> argparse.Namespace:
    """Parse an example's command line: ``--full`` for the long run.

    Args:
        argv: the arguments (default ``sys.argv[1:]``).
        description: the ``--help`` text (default: the running script's docstring).

    Returns:
        A namespace with ``full`` (bool).

    Example:
        >>> args = parse_args()
        >>> steps = 2000 if args.full else 200
    """
    if description is None:
        description = getattr(sys.modules.get("__main__"), "__doc__", None)
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--full", action="store_true", help="the long run: more steps, finer grids, bigger images"
    )
    return parser.parse_args(argv)


def save_figure(fig, name: str | None = None, **savefig_kwargs) -> Path:
    """Save a matplotlib figure as PNG into :func:`gallery_dir` and print where it went.

    Args:
        fig: a ``matplotlib.figure.Figure``.
        name: the file's stem; default the script's: ``01_taylor_sin`` for
            ``examples/01_taylor_sin.py``, ``quantum-01_vqe`` for ``examples/quantum/01_vqe.py``.
        **savefig_kwargs: passed to ``fig.savefig`` (``dpi=120``, ``bbox_inches="tight"`` unless
            given).

    Returns:
        The path of the PNG.
    """
    if name is None:
        script = Path(sys.argv[0]).resolve()
        examples = REPO_ROOT / "examples"
        if script.is_relative_to(examples):
            name = "-".join(script.relative_to(examples).with_suffix("").parts)
        else:
            name = script.stem
    savefig_kwargs.setdefault("dpi", 120)
    savefig_kwargs.setdefault("bbox_inches", "tight")
    path = gallery_dir() / f"{name}.png"
    fig.savefig(path, **savefig_kwargs)
    print(f"wrote {path}")
    return path


def result(message: str) -> None:
    """Print the example's final line, ``RESULT: <message>``, which the gallery page shows.

    Args:
        message: what the example fitted or computed, with its numbers.

    Example:
        >>> result("d/dx sin(1) = 0.5403023037918872 (cos 1 = 0.5403023058681398)")
        RESULT: d/dx sin(1) = 0.5403023037918872 (cos 1 = 0.5403023058681398)
    """
    print(f"RESULT: {message}", flush=True)
