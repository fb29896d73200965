"""The test suite. A package so that ``tests.harness`` imports from the repository root."""
