"""``python -m examples``: run the gallery (see ``examples/run_all.py``)."""

from examples.run_all import main

raise SystemExit(main())
