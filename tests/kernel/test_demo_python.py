"""The offline demo model works in the kernel: ``describe $`df` and plot its first column``
makes it call the ``python`` tool, whose code runs in the notebook's own kernel (approved here
by a policy, as Run All would be), and it answers from what came back. A real kernel driven
like JupyterLab, the real agent and the demo model."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.kernel, pytest.mark.agent]

POLICY = '%atomic_agent policy --title "Python in the kernel" yes'
FRAME = "import pandas as pd\ndf = pd.DataFrame({'height': [1.0, 3.0, 2.0], 'name': list('abc')})"


@pytest.fixture(scope="module")
def kernel_setup() -> list[str]:
    return ["%atomic_agent start --demo", "import atomic_jupyter as aj", FRAME]


def last_run_text(kernel) -> str:
    return kernel.execute("print(aj.session().runs[-1].text)").stdout


def test_the_demo_describes_and_plots_a_cited_frame_with_the_python_tool(kernel):
    kernel.execute(POLICY)
    try:
        kernel.execute(
            "%%atomic_agent --wait\ndescribe $`df` and plot its first column", timeout=120
        )
    finally:
        kernel.execute("%atomic_agent policy --clear")
    answer = last_run_text(kernel)
    assert "I'll look at `df` in your kernel and plot its first column." in answer
    assert "Here are the first lines of what `df.describe()` printed in your kernel:" in answer
    assert "count     3.0" in answer and "mean      2.0" in answer
    assert "The plot of its first column is in the `python` tool's card above." in answer
    # The figure went to the card and was closed: none is left for the person's next cell.
    assert (
        kernel.execute("import matplotlib.pyplot as plt\nprint(plt.get_fignums())").stdout == "[]\n"
    )


def test_a_declined_call_is_said_plainly(kernel):
    kernel.execute('%atomic_agent policy --title "Python in the kernel" no')
    try:
        kernel.execute("%%atomic_agent --wait\nplot $`df`", timeout=120)
    finally:
        kernel.execute("%atomic_agent policy --clear")
    answer = last_run_text(kernel)
    assert "You declined to run the code, so I did not describe or plot `df`." in answer
