"""Running the agent's Python in the notebook's own kernel, on its main thread, and catching
everything it shows.

:func:`run_code` executes code in the shell's user namespace (so what it defines stays for the
next cell), as IPython would run a cell, with these differences:

- nothing goes to the cell that happens to be running: stdout, stderr and every display are
  caught, in order, kept within bounds (:data:`STREAM_HEAD` + :data:`STREAM_TAIL` characters of
  text, :data:`MAX_DISPLAYS` displays), and new matplotlib figures are rendered as PNG and
  closed, so none shows up in the person's next cell;
- it takes no cell number: ``In``, ``Out``, ``_`` and the execution count stay the person's;
- stdin is not the agent's: ``input()`` and ``getpass`` raise :class:`StdinNotAvailable`;
- ``exit()``, ``quit()`` and ``sys.exit()`` end the code, not the kernel; closing
  ``sys.stdout`` closes only the catcher;
- the kernel's interrupt (SIGINT) is a ``KeyboardInterrupt`` in the code even while the kernel
  is idle (when ipykernel ignores SIGINT);
- a SyntaxError is reported before anything runs.
"""

from __future__ import annotations

import ast
import base64
import builtins
import collections
import getpass
import io
import linecache
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from atomic_jupyter.notebook.kernel_values import _safe_repr
from atomic_jupyter.ui.ansi import strip_ansi

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

__all__ = [
    "CodeOutput",
    "CodeResult",
    "StdinNotAvailable",
    "run_code",
]

#: Characters of stdout and stderr kept from the start of a call's output, and from its end.
STREAM_HEAD, STREAM_TAIL = 64_000, 8_000
#: Displays kept (figures included); later ones are counted.
MAX_DISPLAYS = 20
#: Characters of a display's text and of its HTML kept (longer HTML is dropped for its text).
DISPLAY_TEXT, DISPLAY_HTML = 4_000, 200_000
#: The longest side of an image, in pixels; larger ones are scaled down.
IMAGE_SIDE = 1024
#: Images larger than this (bytes) that cannot be scaled down are left out.
IMAGE_BYTES = 1_500_000


class StdinNotAvailable(RuntimeError):
    """The agent's code asked for input: the kernel's stdin belongs to the person."""

    def __init__(self) -> None:
        super().__init__("the kernel's stdin is not available to the agent")


class _ExitRequested(BaseException):
    """``exit()`` or ``quit()`` in the agent's code."""


@dataclass
class CodeOutput:
    """One thing the code showed, in order.

    Attributes
    ----------
    kind:
        ``"stream"``, ``"display"``, ``"value"`` (the last expression's) or ``"note"``.
    name:
        ``"stdout"`` or ``"stderr"`` for a stream.
    text:
        The text (a stream's, a display's ``text/plain``, a note).
    html:
        A display's ``text/html`` as the object made it (not sanitised: a view must).
    image:
        ``(mime, base64)`` of a display's PNG or JPEG, or of a figure.
    """

    kind: str
    name: str = ""
    text: str = ""
    html: str | None = None
    image: tuple[str, str] | None = None


@dataclass
class CodeResult:
    """What came of running some code.

    Attributes
    ----------
    outputs:
        What it showed, in order, within bounds.
    value:
        The last expression's value (None when there is none or it is None).
    error:
        The traceback (plain text, only the code's own frames) or the SyntaxError; None when
        it ran through.
    interrupted:
        Whether the kernel's interrupt ended it.
    duration:
        Seconds it ran.
    """

    outputs: list[CodeOutput] = field(default_factory=list)
    value: Any = None
    error: str | None = None
    interrupted: bool = False
    duration: float = 0.0


class _Catcher:
    """The outputs of one run, kept within bounds as they come."""

    def __init__(self) -> None:
        self.outputs: list[CodeOutput] = []
        self._kept = 0  # stream characters kept in outputs
        self._tail: collections.deque[tuple[str, str]] = collections.deque()
        self._tail_chars = 0
        self._dropped = 0  # stream characters neither kept nor in the tail
        self._displays = 0
        self._ids: dict[str, int] = {}

    def stream(self, name: str, text: str) -> None:
        if not text:
            return
        room = STREAM_HEAD - self._kept
        if room > 0 and not self._tail:
            kept, text = text[:room], text[room:]
            self._kept += len(kept)
            last = self.outputs[-1] if self.outputs else None
            if last is not None and last.kind == "stream" and last.name == name:
                last.text += kept
            else:
                self.outputs.append(CodeOutput("stream", name, kept))
        if text:
            self._tail.append((name, text[-STREAM_TAIL:]))
            self._dropped += len(text) - len(self._tail[-1][1])
            self._tail_chars += len(self._tail[-1][1])
            while self._tail_chars - len(self._tail[0][1]) >= STREAM_TAIL:
                gone = self._tail.popleft()
                self._tail_chars -= len(gone[1])
                self._dropped += len(gone[1])

    def display(
        self, output: CodeOutput, display_id: str | None = None, update: bool = False
    ) -> None:
        if update and display_id in self._ids:
            self.outputs[self._ids[display_id]] = output
            return
        if update:
            return  # an update of a display made before the call: not this call's
        self._settle_tail()
        self._displays += 1
        if self._displays > MAX_DISPLAYS:
            return
        if display_id:
            self._ids[display_id] = len(self.outputs)
        self.outputs.append(output)

    @property
    def full(self) -> bool:
        """Whether no more display is kept (later ones are only counted)."""
        return self._displays >= MAX_DISPLAYS

    def count_display(self) -> None:
        """Count a display that is not kept."""
        self._displays += 1

    def _settle_tail(self) -> None:
        """Put what the tail holds into the outputs (a display comes after it)."""
        if not self._tail:
            return
        if self._dropped:
            self.outputs.append(
                CodeOutput("note", text=f"{self._dropped:,} characters of output left out")
            )
        for name, text in self._tail:
            last = self.outputs[-1] if self.outputs else None
            if last is not None and last.kind == "stream" and last.name == name:
                last.text += text
            else:
                self.outputs.append(CodeOutput("stream", name, text))
        self._tail.clear()
        self._tail_chars = self._dropped = 0
        self._kept = STREAM_HEAD  # the head is spent: later text goes to the tail

    def finish(self) -> list[CodeOutput]:
        self._settle_tail()
        if self._displays > MAX_DISPLAYS:
            left = self._displays - MAX_DISPLAYS
            self.outputs.append(CodeOutput("note", text=f"{left:,} more displays left out"))
        return self.outputs


class _Stream(io.TextIOBase):
    """``sys.stdout`` or ``sys.stderr`` while the agent's code runs."""

    def __init__(self, name: str, catcher: _Catcher) -> None:
        super().__init__()
        self.name_ = name
        self._catcher = catcher
        self.closed_by_code = False

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        if self.closed_by_code:
            raise ValueError("I/O operation on closed file.")
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._catcher.stream(self.name_, text)
        return len(text)

    def close(self) -> None:
        self.closed_by_code = True  # the kernel's own stream stays open


class _NoStdin(io.TextIOBase):
    """``sys.stdin`` while the agent's code runs."""

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> str:
        raise StdinNotAvailable()

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        raise StdinNotAvailable()


def _no_input(*_args: Any, **_kwargs: Any) -> str:
    raise StdinNotAvailable()


def _display_output(data: dict[str, Any], kind: str = "display") -> CodeOutput:
    """One display's data as an output: its image, HTML and text, bounded."""
    text = data.get("text/plain")
    html = data.get("text/html")
    output = CodeOutput(kind, text=strip_ansi(str(text))[:DISPLAY_TEXT] if text is not None else "")
    if isinstance(html, str) and len(html) <= DISPLAY_HTML:
        output.html = html
    for mime in ("image/png", "image/jpeg"):
        image = data.get(mime)
        if isinstance(image, bytes):
            image = base64.b64encode(image).decode("ascii")
        if isinstance(image, str):
            output.image = _bounded_image(mime, image.replace("\n", ""))
            if output.image is None:
                output.text = output.text or "(an image too large to keep)"
            break
    return output


def _bounded_image(mime: str, data: str) -> tuple[str, str] | None:
    """The image, scaled down to :data:`IMAGE_SIDE` when larger (None: too large to keep)."""
    try:
        from PIL import Image

        raw = base64.b64decode(data)
        with Image.open(io.BytesIO(raw)) as picture:
            if max(picture.size) <= IMAGE_SIDE and len(raw) <= IMAGE_BYTES:
                return mime, data
            picture.thumbnail((IMAGE_SIDE, IMAGE_SIDE))
            out = io.BytesIO()
            picture.save(out, format="PNG" if mime == "image/png" else "JPEG")
        return mime, base64.b64encode(out.getvalue()).decode("ascii")
    except Exception:
        return (mime, data) if len(data) * 3 // 4 <= IMAGE_BYTES else None


def _figure_of(value: Any) -> Any:
    """The matplotlib figure ``value`` is, or draws on (None for anything else)."""
    figure_type = _figure_class()
    if figure_type is None:
        return None
    if isinstance(value, figure_type):
        return value
    if isinstance(value, list) and value:
        value = value[0]
    figure = getattr(value, "figure", None)
    return figure if isinstance(figure, figure_type) else None


def _figure_class() -> type | None:
    module = sys.modules.get("matplotlib.figure")
    return getattr(module, "Figure", None) if module is not None else None


def _open_figures() -> dict[int, Any]:
    helpers = sys.modules.get("matplotlib._pylab_helpers")
    if helpers is None:
        return {}
    return {m.num: m.canvas.figure for m in helpers.Gcf.get_all_fig_managers()}


def _figure_png(figure: Any) -> tuple[str, str] | None:
    out = io.BytesIO()
    width, height = figure.get_size_inches()
    dpi = min(100.0, IMAGE_SIDE / max(width, height, 0.01))
    figure.savefig(out, format="png", dpi=dpi, bbox_inches="tight")
    return _bounded_image("image/png", base64.b64encode(out.getvalue()).decode("ascii"))


class _CatchingPublisher:
    """Stands in for the shell's display publisher while the agent's code runs."""

    def __init__(self, catcher: _Catcher, original: Any) -> None:
        self._catcher = catcher
        self._original = original
        self.is_publishing = False

    def publish(
        self,
        data: dict[str, Any],
        metadata: Any = None,
        source: Any = None,
        *,
        transient: dict[str, Any] | None = None,
        update: bool = False,
        **_kwargs: Any,
    ) -> None:
        display_id = (transient or {}).get("display_id")
        self._catcher.display(_display_output(dict(data)), display_id, update)

    def clear_output(self, wait: bool = False) -> None:
        """Clearing the cell's output is not the agent's to do: ignored."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._original, name)


@contextmanager
def _caught(shell: InteractiveShell, catcher: _Catcher) -> Iterator[tuple[_Stream, _Stream]]:
    """Redirect output, displays, stdin, exit and the interrupt for the code's run."""
    out, err = _Stream("stdout", catcher), _Stream("stderr", catcher)
    saved = (sys.stdout, sys.stderr, sys.stdin, builtins.input, getpass.getpass)
    publisher = shell.display_pub
    own_ask_exit = vars(shell).get("ask_exit")  # one set on the shell itself, if any
    exit_now = getattr(shell, "exit_now", False)
    main = threading.current_thread() is threading.main_thread()
    sigint = signal.getsignal(signal.SIGINT) if main else None

    def ask_exit() -> None:
        raise _ExitRequested()

    sys.stdout, sys.stderr, sys.stdin = out, err, _NoStdin()
    builtins.input = getpass.getpass = _no_input
    shell.display_pub = _CatchingPublisher(catcher, publisher)  # type: ignore[assignment]
    setattr(shell, "ask_exit", ask_exit)  # noqa: B010 (IPython's own exit() calls it)
    if main:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield out, err
    finally:
        if main and sigint is not None:
            signal.signal(signal.SIGINT, sigint)
        sys.stdout, sys.stderr, sys.stdin, builtins.input, getpass.getpass = saved
        shell.display_pub = publisher
        if own_ask_exit is None:
            delattr(shell, "ask_exit")
        else:
            setattr(shell, "ask_exit", own_ask_exit)  # noqa: B010
        shell.exit_now = exit_now


def _traceback(error: BaseException, filename: str) -> str:
    """The error's traceback from the code's own first frame on, without colours and without
    this module's frames (``input()`` raising here reads as ``input()`` raising)."""
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    shown = traceback.TracebackException(type(error), error, tb)
    shown.stack = traceback.StackSummary.from_list(
        [frame for frame in shown.stack if frame.filename != __file__]
    )
    return strip_ansi("".join(shown.format()))


def _compiled(shell: InteractiveShell, code: str, filename: str) -> tuple[Any, Any]:
    """The code compiled: its statements, and its last expression (or None).

    Raises SyntaxError (with the line) when it does not parse.
    """
    try:
        source = shell.transform_cell(code)  # %magics and !commands, as in a cell
    except Exception:
        source = code
    tree = ast.parse(source, filename=filename)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)  # for tracebacks
    body = compile(tree, filename, "exec", dont_inherit=True)
    value = compile(last, filename, "eval", dont_inherit=True) if last is not None else None
    return body, value


def run_code(shell: InteractiveShell, code: str, filename: str = "<agent>") -> CodeResult:
    """Run ``code`` in ``shell``'s user namespace and catch all it shows.

    Parameters
    ----------
    shell:
        The kernel's shell (its namespace is the notebook's).
    code:
        Python source; IPython's ``%magics`` and ``!commands`` work as in a cell.
    filename:
        The name its frames have in a traceback (``<Agent[3]>``).

    Returns
    -------
    CodeResult
        Never raises for anything the code does, an interrupt included.
    """
    result = CodeResult()
    catcher = _Catcher()
    started = time.perf_counter()
    try:
        body, last = _compiled(shell, code, filename)
    except SyntaxError as exc:
        lines = traceback.format_exception_only(type(exc), exc)
        result.error = strip_ansi("".join(lines))
        return result
    before = _open_figures()
    value = None
    try:
        with _caught(shell, catcher) as (out, err):
            try:
                exec(body, shell.user_global_ns, shell.user_ns)
                if last is not None:
                    value = eval(last, shell.user_global_ns, shell.user_ns)
            except _ExitRequested:
                result.error = "The code called exit(): it ended, and the kernel keeps running."
            except SystemExit as exc:
                result.error = f"The code called sys.exit({exc.code!r}): it ended, and the kernel keeps running."
            except KeyboardInterrupt as exc:
                result.interrupted = True
                result.error = (
                    _traceback(exc, filename) + "The kernel was interrupted (its stop button)."
                )
            except BaseException as exc:
                result.error = _traceback(exc, filename)
            if out.closed_by_code or err.closed_by_code:
                note = "The code closed sys.stdout or sys.stderr (the kernel's own stay open)."
                result.error = f"{result.error}\n{note}" if result.error else note
    except KeyboardInterrupt:  # between the code's end and the catcher's
        result.interrupted = True
        result.error = result.error or "The kernel was interrupted (its stop button)."
    result.duration = time.perf_counter() - started
    _catch_figures(catcher, before, value)
    if value is not None and result.error is None:
        result.value = value
        catcher.outputs.append(_value_output(shell, value))
    result.outputs = catcher.finish()
    return result


def _catch_figures(catcher: _Catcher, before: dict[int, Any], value: Any) -> None:
    """Render the figures the code made (and the one its value is), closing its own."""
    figures = [f for n, f in _open_figures().items() if n not in before]
    shown = _figure_of(value)
    if shown is not None and shown not in figures:
        figures.append(shown)
    pyplot = sys.modules.get("matplotlib.pyplot")
    for figure in figures:
        if catcher.full:  # counted, not drawn
            catcher.count_display()
            if pyplot is not None and figure not in before.values():
                pyplot.close(figure)
            continue
        try:
            image = _figure_png(figure)
        except Exception as exc:
            catcher.display(CodeOutput("note", text=f"a figure could not be drawn: {exc}"))
            image = None
        if image is not None:
            catcher.display(CodeOutput("display", text=_plain(figure), image=image))
        if pyplot is not None and figure not in before.values():
            pyplot.close(figure)


def _plain(value: Any) -> str:
    return strip_ansi(_safe_repr(value))[:DISPLAY_TEXT]


def _value_output(shell: InteractiveShell, value: Any) -> CodeOutput:
    """The last expression's value as an output (its figure, if any, is shown already)."""
    if _figure_of(value) is not None:
        return CodeOutput("value", text=_plain(value))
    try:
        formatter = shell.display_formatter
        data = dict(formatter.format(value)[0]) if formatter is not None else {}
    except Exception:
        data = {}
    if "text/plain" not in data:
        data["text/plain"] = _plain(value)
    return _display_output(data, kind="value")
