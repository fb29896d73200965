"""Extension prototyping from notebook cells: ``%%atomic_extension NAME``."""

from .manager import HUB_EXTENSION, PrototypeError, PrototypeManager, PrototypeResult

__all__ = ["HUB_EXTENSION", "PrototypeError", "PrototypeManager", "PrototypeResult"]
