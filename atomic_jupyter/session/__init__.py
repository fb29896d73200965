"""The session layer: an agent session as data and behaviour, made of small parts (UI state,
dialogs, policies, runs, transcripts, commands, wait). No widgets and no IPython here: views
observe these objects through listeners that can be removed.
"""
