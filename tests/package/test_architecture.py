"""The package's layers, checked on its source: every import, including those under
``TYPE_CHECKING`` and inside functions, goes down the layers, never up; nothing below the
ui layer imports a widget library or IPython; and no import cycle exists between modules.
Also: no module is over :data:`MAX_MODULE_LINES` lines, and only :data:`DATA_URL_BUILDER`
builds a ``data:`` URL.

Layers, top to bottom (each may import only the ones below it, and ``errors``/``_version``):
``wiring`` > ``notebook`` > ``ui`` > ``addons`` > ``session`` > ``transport`` > ``protocol``.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "atomic_jupyter"
LAYERS = ["protocol", "transport", "session", "addons", "ui", "notebook", "wiring"]
SHARED = {"errors", "_version"}  # leaf modules every layer may use
#: Third-party packages that belong to the notebook side only.
WIDGET_OR_IPYTHON = {"ipywidgets", "IPython", "ipykernel", "traitlets", "comm"}
#: Modules the sans-IO protocol layer must not use.
IO_MODULES = {"subprocess", "threading", "socket", "asyncio", "os", "select", "signal"}
#: The most lines a module may have: a longer one does more than one job.
MAX_MODULE_LINES = 700
#: The one module that builds ``data:`` URLs, after checking the image's type and bytes.
DATA_URL_BUILDER = "atomic_jupyter.ui.images"
#: ``data:`` and a MIME type (``data:image/png``), or ``data:`` ending a piece of a string being
#: built (``"data:" + kind``, ``f"data:{kind};base64,..."``). Not an event-stream line
#: (``data: [DONE]``), a Sphinx role (``:data:`NAME```) or a word that ends in "data:".
DATA_URL = re.compile(r"(?<![\w:-])data:(?:[a-z]+/[a-z0-9.+-]+|$)", re.IGNORECASE)


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
        return  # the root and cli.py are above the layers; errors and _version import nothing
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


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_too_long(module: str) -> None:
    lines = len(MODULES[module].read_text().splitlines())
    assert lines <= MAX_MODULE_LINES, f"{module} has {lines} lines; split it along its sections"


def data_url_strings(path: Path) -> list[str]:
    """The string constants of ``path`` that build a ``data:`` URL (docstrings left out;
    the literal pieces of an f-string are constants too)."""
    tree = ast.parse(path.read_text(), str(path))
    documented = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, documented)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or id(node) in docstrings:
            continue
        value = node.value
        text = value.decode("latin-1") if isinstance(value, bytes) else value
        if isinstance(text, str) and DATA_URL.search(text):
            found.append(text)
    return found


def test_the_data_url_pattern_tells_urls_from_other_text() -> None:
    for url in (
        "data:image/png;base64,AAAA",
        "data:",
        "src='data:text/html,x'",
        "DATA:Image/SVG+xml",
    ):
        assert DATA_URL.search(url), url
    for other in ("data: [DONE]", ":data:`MAX_LINES`", "metadata:", "data: {data}", "the data"):
        assert not DATA_URL.search(other), other


def test_only_the_image_checks_build_a_data_url() -> None:
    assert data_url_strings(MODULES[DATA_URL_BUILDER]), "the scan no longer sees the builder"
    builders = sorted(
        module
        for module, path in MODULES.items()
        if module != DATA_URL_BUILDER and data_url_strings(path)
    )
    assert builders == [], f"only {DATA_URL_BUILDER} may build a data: URL"


def test_no_class_has_not_implemented_stubs_standing_in_for_another_class() -> None:
    """A mixin held together by ``raise NotImplementedError`` stubs for what another class
    provides hides how the two depend on each other; a part takes what it needs in its
    constructor instead. A method is a stub when its body is a docstring and/or ``raise
    NotImplementedError``; a ``Protocol`` (an interface) and an ``abstractmethod`` are not."""

    def stubs(source: str) -> list[str]:
        found = []
        for cls in ast.walk(ast.parse(source)):
            if not isinstance(cls, ast.ClassDef) or any(
                ast.unparse(base).split("[")[0].endswith("Protocol") for base in cls.bases
            ):
                continue
            for method in cls.body:
                if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or any(
                    "abstractmethod" in ast.unparse(d) for d in method.decorator_list
                ):
                    continue
                body = method.body
                if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                    body = body[1:]  # the docstring
                if (
                    len(body) == 1
                    and isinstance(body[0], ast.Raise)
                    and body[0].exc is not None
                    and ast.unparse(body[0].exc).split("(")[0] == "NotImplementedError"
                ):
                    found.append(f"{cls.name}.{method.name}")
        return found

    mixin = (
        "class Methods:\n"
        "    @property\n"
        "    def alive(self) -> bool:\n"
        "        raise NotImplementedError  # provided by the session\n"
        "    def request(self, command):\n"
        '        """Provided by the session."""\n'
        '        raise NotImplementedError("the session has it")\n'
        "    def prompt(self, text):\n"
        "        return self.request(text)\n"
        "class Interface(Protocol):\n"
        "    def request(self, command):\n"
        "        raise NotImplementedError\n"
    )
    assert stubs(mixin) == ["Methods.alive", "Methods.request"], "the scan no longer sees stubs"
    found = sorted(
        f"{module}: {stub}" for module, path in MODULES.items() for stub in stubs(path.read_text())
    )
    assert found == [], "methods stand in for another class's (take the part instead)"


#: A dotted name of the package in a docstring or comment (``atomic_jupyter.ui.record``).
DOTTED = re.compile(r"\batomic_jupyter(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
#: A design document of ours named in the package (the agent's own docs are its package's).
OUR_DOCUMENT = re.compile(r"\b(ARCHITECTURE|RELIABILITY|BENCHMARKS|README|DESIGN)\.md\b")


def resolves(dotted: str) -> bool:
    """Whether ``dotted`` names a module of the package or something in one."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False


def test_every_module_named_in_the_package_exists() -> None:
    missing = sorted(
        f"{module}: {name}"
        for module, path in MODULES.items()
        for name in set(DOTTED.findall(path.read_text()))
        if not resolves(name.rstrip("."))
    )
    assert missing == []


def test_every_document_named_in_the_package_exists() -> None:
    root = Path(__file__).resolve().parents[2]
    missing = sorted(
        f"{module}: {name}.md"
        for module, path in MODULES.items()
        for name in set(OUR_DOCUMENT.findall(path.read_text()))
        if not (root / f"{name}.md").is_file()
    )
    assert missing == []


#: The most lines a class may have: a longer one holds more than one part.
MAX_CLASS_LINES = 400


def long_classes(source: str) -> list[str]:
    """The classes of ``source`` longer than :data:`MAX_CLASS_LINES`, with their lengths."""
    return [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ClassDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_CLASS_LINES
    ]


def test_no_class_is_over_400_lines() -> None:
    body = "".join(f"    def m{i}(self):\n        return {i}\n" for i in range(200))
    assert long_classes(f"class Big:\n{body}") == ["Big (401 lines)"], "the scan sees no class"
    assert long_classes("class Small:\n    pass\n") == []
    found = sorted(
        f"{module}: {cls}"
        for module, path in MODULES.items()
        for cls in long_classes(path.read_text())
    )
    assert found == [], "split the class into parts, each with one job"


#: The parts a run is described as (``ui/run_parts.py``) and who may render them: the record's
#: renderer renders every part; the live output adds only its form of the interactive ones.
PART_TYPES = {"Text", "Markup", "Group", "Fold", "DialogSlot", "AnswerSlot", "StopSlot"}
INTERACTIVE_PARTS = {"DialogSlot", "AnswerSlot", "StopSlot"}
PART_RENDERER = "atomic_jupyter.ui.record"
LIVE_SLOTS = "atomic_jupyter.ui.run_output"


def parts_rendered(source: str) -> set[str]:
    """The part types (imported from ``ui/run_parts.py``) that ``source`` tells apart with
    ``isinstance``: what a renderer does."""
    tree = ast.parse(source)
    imported = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "atomic_jupyter.ui.run_parts"
        for alias in node.names
    } & PART_TYPES
    found: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "isinstance"
            and len(node.args) == 2
        ):
            kinds = node.args[1]
            names = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
            found |= {n.id for n in names if isinstance(n, ast.Name) and n.id in imported}
    return found


def test_one_module_renders_each_part() -> None:
    """The live view and the record cannot drift when one module renders every part: a
    second renderer (such as the old widget reconciler) fails this."""
    sample = "from atomic_jupyter.ui.run_parts import Fold, Group, Text\ndef f(p):\n    if isinstance(p, (Text, Group)):\n        return 1\n    return isinstance(p, Fold)\n"
    assert parts_rendered(sample) == {"Text", "Group", "Fold"}, "the scan sees no renderer"
    renderers: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        if module == "atomic_jupyter.ui.run_parts":
            continue  # where the parts are declared
        for part in parts_rendered(path.read_text()):
            renderers.setdefault(part, set()).add(module)
    for part in sorted(PART_TYPES - INTERACTIVE_PARTS):
        assert renderers.get(part) == {PART_RENDERER}, (
            f"{part} is rendered by {renderers.get(part)}"
        )
    for part in sorted(INTERACTIVE_PARTS):
        assert renderers.get(part, set()) <= {PART_RENDERER, LIVE_SLOTS}, (part, renderers[part])
