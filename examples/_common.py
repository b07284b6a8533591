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


def fit_figure(images, titles, history, truth, labels, ylabel, losses, *, suptitle,
               loss_label="MSE loss", show=None, mark=None, xlabel="Adam iteration"):
    """The figure of an inverse problem: images on top, the fit against the truth below.

    Args:
        images: the pictures to show in the top row (initial guess, final fit, target, ...).
        titles: one title per image.
        history: the fitted parameters per iteration, shape ``(iterations + 1, k)`` (the start
            first), or ``None`` for no parameter panel.
        truth: the true values, shape ``(k,)``; drawn as dashed lines of the same colour.
        labels: one name per parameter (``"x"``, ``"ω₁"`` ...).
        ylabel: the parameters' axis label, with units.
        losses: the loss per iteration (log scale).
        suptitle: the figure's title.
        loss_label: the loss axis label, with units.
        show: ``show(ax, image)`` draws one image (default ``ax.imshow(image)``).
        mark: an iteration to mark with a dotted line (e.g. the paper's figure), or ``None``.
        xlabel: the iterations' axis label.

    Returns:
        The ``matplotlib.figure.Figure``.
    """
    import matplotlib.pyplot as plt
    import numpy as np

    n = len(images)
    # Compact, with large type: the figure is shown at page width (about 700 px) in the docs.
    plt.rcParams.update({"font.size": 12, "legend.fontsize": 11})
    fig = plt.figure(figsize=(max(10, 3.3 * n), 7.5))
    grid = fig.add_gridspec(2, 2 * n)
    for k, (img, title) in enumerate(zip(images, titles)):
        ax = fig.add_subplot(grid[0, 2 * k : 2 * k + 2])
        if show is None:
            ax.imshow(img)
        else:
            show(ax, img)
        ax.set_title(title)
        ax.axis("off")
    half = n if history is not None else 0
    if history is not None:
        ax = fig.add_subplot(grid[1, :half])
        history = np.asarray(history)
        steps = np.arange(len(history))
        for k, label in enumerate(labels):
            color = f"C{k % 10}"
            ax.plot(steps, history[:, k], color=color, label=f"{label} (true {truth[k]:g})")
            ax.axhline(truth[k], color=color, ls="--", lw=1)
        if mark is not None:
            ax.axvline(mark, color="k", ls=":", lw=1)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title("fitted parameters (lines) against the truth (dashed)")
        ax.legend(ncol=2 if len(labels) > 3 else 1, loc="best", framealpha=0.8)
    ax = fig.add_subplot(grid[1, half:])
    ax.semilogy(losses)
    if mark is not None:
        ax.axvline(mark, color="k", ls=":", lw=1)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(loss_label)
    ax.set_title("loss")
    fig.suptitle(suptitle)
    fig.tight_layout()
    return fig
