"""The suite's fixtures live in the harness plugin, ``tests/harness/plugin.py``."""

pytest_plugins = ["tests.harness.plugin"]
