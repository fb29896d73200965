"""The presentation layer: the dispatcher onto the kernel event loop, and views that observe
session state and render it as ipywidgets (panel, dialogs, transcripts, prototype results,
Markdown, escaped text).
"""
