"""Python functions of the kernel as the agent's tools: the bundled extension
(``kernel_tools.ts``) and the addon that loads it and publishes the tools."""

from atomic_jupyter.addons.kernel_tools.runtime import (
    COMMAND,
    ENV_VAR,
    KERNEL_TOOLS_EXTENSION,
    KernelToolsAddon,
    kernel_tools_addon,
)

__all__ = [
    "COMMAND",
    "ENV_VAR",
    "KERNEL_TOOLS_EXTENSION",
    "KernelToolsAddon",
    "kernel_tools_addon",
]
