"""The RPC protocol with no I/O: JSONL framing, typed messages, the lean decoder, and a
sans-IO connection that matches replies to commands. Imports nothing but the standard library
(and msgspec, optionally).
"""
