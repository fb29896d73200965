"""Saved conversations: each session's conversation kept with its notebook, continued by a
new kernel (:mod:`.runtime`)."""
