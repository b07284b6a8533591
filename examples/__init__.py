"""The example gallery: ``python -m examples`` runs every example and writes ``gallery/``.

Conventions for an example (see ``examples/run_all.py`` for the runner):

- A flat numbered script: ``examples/NN_name.py`` for the AD core, ``examples/<pkg>/NN_name.py``
  for a domain package (``raytrace``, ``quantum``, ``sde``, ``finance``).
- Its module docstring's first line says what it shows; the gallery page uses it as the caption.
- It imports its helpers with ``from examples._common import gallery_dir, parse_args, result``,
  accepts ``--full`` (a longer, higher-quality run; the default run is quick), writes its
  figure(s) as PNG into ``gallery_dir()`` (``save_figure`` names them after the script), and
  prints a final line ``RESULT: <what it fitted>`` through ``result()``.
- Run one by hand from the repository root: ``python -m examples.01_taylor_sin`` (or
  ``python -m examples -k taylor`` to run it through the runner and refresh the gallery page).
"""
