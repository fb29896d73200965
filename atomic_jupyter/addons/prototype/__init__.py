"""Extension prototyping from notebook cells: ``%%atomic_extension NAME``."""

from atomic_jupyter.addons.prototype.manager import (
    HUB_EXTENSION,
    Problem,
    PrototypeError,
    PrototypeManager,
    PrototypeResult,
    prototype_addon,
)

__all__ = [
    "HUB_EXTENSION",
    "Problem",
    "PrototypeError",
    "PrototypeManager",
    "PrototypeResult",
    "prototype_addon",
]
