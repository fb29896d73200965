"""``python -m atomic_jupyter``: the ``atomic-jupyter`` command line (:mod:`atomic_jupyter.cli`)."""

import sys

from atomic_jupyter.cli import main

sys.exit(main())
