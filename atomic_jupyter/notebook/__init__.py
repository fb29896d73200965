"""The notebook layer: the magics, the Python API, the registry of sessions and the traitlets
configuration.
"""
