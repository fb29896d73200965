"""The presentation layer: one module per widget family. No subprocesses here."""
