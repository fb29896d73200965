"""The I/O layer: which command to launch, the agent process and its threads, and the client
that joins a process to a protocol connection. No sessions, dialogs or widgets.
"""
