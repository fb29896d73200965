"""Extension prototyping from notebook cells: ``%%atomic_extension NAME``."""

from atomic_jupyter.addons.prototype.manager import (
    HUB_EXTENSION,
    PrototypeError,
    PrototypeManager,
    PrototypeResult,
)

__all__ = ["HUB_EXTENSION", "PrototypeError", "PrototypeManager", "PrototypeResult"]
