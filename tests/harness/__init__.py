"""The tests' own harness, shared by the tests and the benchmarks.

- ``tests.harness.plugin``: the pytest fixtures (loaded by ``tests/conftest.py``).
- ``tests.harness.support``: paths, the scripted model's turns, ``wait_until`` and friends.
- ``tests.harness.kernel_client``: ``BrowserLikeKernel``, a kernel driven like JupyterLab.
- ``tests.harness.widget_text``: reading the page as a person reads it.
- ``tests/harness/standin_agent.py``: a fault-injecting agent, run as a script
  (``support.STANDIN_AGENT``).
"""
