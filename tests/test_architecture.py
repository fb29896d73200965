"""The package's layers, checked on its source: every import, including those under
``TYPE_CHECKING`` and inside functions, goes down the layers, never up; nothing below the
ui layer imports a widget library or IPython; and no import cycle exists between modules.

Layers, top to bottom (each may import only the ones below it, and ``errors``/``_version``):
``wiring`` > ``notebook`` > ``ui`` > ``addons`` > ``session`` > ``transport`` > ``protocol``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "atomic_jupyter"
LAYERS = ["protocol", "transport", "session", "addons", "ui", "notebook", "wiring"]
SHARED = {"errors", "_version"}  # leaf modules every layer may use
#: Third-party packages that belong to the notebook side only.
WIDGET_OR_IPYTHON = {"ipywidgets", "IPython", "ipykernel", "traitlets", "comm"}
#: Modules the sans-IO protocol layer must not use.
IO_MODULES = {"subprocess", "threading", "socket", "asyncio", "os", "select", "signal"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in it (absolute names)."""
    tree = ast.parse(path.read_text(), str(path))
    package = module_name(path).rsplit(".", 0 if path.name == "__init__.py" else 1)[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                prefix = ".".join([*base, node.module] if node.module else base)
            else:
                prefix = node.module or ""
            found.add(prefix)
            # ``from atomic_jupyter.x import y`` may import the module x.y
            found.update(f"{prefix}.{alias.name}" for alias in node.names)
    return found


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def internal(name: str) -> str | None:
    """The package module that an imported name refers to, or None."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


GRAPH = {
    module: {
        target
        for name in imports_of(path)
        if name.startswith("atomic_jupyter")
        and (target := internal(name)) is not None
        and target != module
        and target != "atomic_jupyter"
    }
    for module, path in MODULES.items()
}


def test_the_graph_sees_the_layers() -> None:
    assert {layer_of(m) for m in MODULES} >= set(LAYERS)
    assert "atomic_jupyter.session.session" in GRAPH["atomic_jupyter.ui.session_view"]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_go_down_the_layers(module: str) -> None:
    layer = layer_of(module)
    if layer is None:
        return  # the package root wires everything; errors and _version import nothing
    rank = LAYERS.index(layer)
    upward = sorted(
        target
        for target in GRAPH[module]
        if (other := layer_of(target)) is not None and LAYERS.index(other) > rank
    )
    assert upward == [], f"{module} imports a layer above its own"
    strays = sorted(
        t for t in GRAPH[module] if layer_of(t) is None and t.split(".")[-1] not in SHARED
    )
    assert strays == [], f"{module} imports the package root or an unlisted module"


@pytest.mark.parametrize(
    "module",
    sorted(m for m in MODULES if layer_of(m) in ("protocol", "transport", "session", "addons")),
)
def test_no_widget_library_or_ipython_below_the_ui_layer(module: str) -> None:
    external = {name.split(".")[0] for name in imports_of(MODULES[module])}
    assert external & WIDGET_OR_IPYTHON == set()


@pytest.mark.parametrize("module", sorted(m for m in MODULES if layer_of(m) == "protocol"))
def test_the_protocol_layer_does_no_io(module: str) -> None:
    external = {name.split(".")[0] for name in imports_of(MODULES[module])}
    assert external & IO_MODULES == set()


def test_no_import_cycle() -> None:
    """Depth-first search for a back edge; the cycle, if any, is named in the failure."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        stack.append(module)
        for target in sorted(GRAPH.get(module, ())):
            if state.get(target) == 1:
                return stack[stack.index(target) :] + [target]
            if target not in state and (cycle := visit(target)) is not None:
                return cycle
        stack.pop()
        state[module] = 2
        return None

    for module in sorted(GRAPH):
        if module not in state:
            cycle = visit(module)
            assert cycle is None, " -> ".join(cycle)


def test_the_session_facade_stays_small() -> None:
    lines = MODULES["atomic_jupyter.session.session"].read_text().count("\n")
    assert lines <= 460, f"session.py has {lines} lines; move the work into a part"
