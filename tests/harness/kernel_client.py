"""Drive a real IPython kernel the way a browser running JupyterLab does.

The :class:`BrowserLikeKernel` harness starts an ``ipykernel`` subprocess with
the current interpreter, talks to it through :mod:`jupyter_client` and plays the
part of the page:

* every IOPub message is processed, whichever request it belongs to, and the
  ``jupyter.widget`` comm traffic is folded into a model-state table
  (:class:`WidgetStateTracker`), as the browser's widget manager keeps its models;
* each of our output widgets (``atomic_jupyter.ui.output_widget``) is drawn from its
  custom messages as the page's own module draws it (:class:`~tests.harness.output_page.PageView`),
  asking for the whole output when it missed a message, as the module does;
* a person's actions are sent the way the module sends them: a ``custom`` comm message
  (:meth:`BrowserLikeKernel.send_custom`);
* every output is filed where JupyterLab would show it (a cell, the log console, or
  nowhere), see :data:`SHOWN_IN`.

Our outputs take no state back from the page (no ``update`` messages, so no echo to
reconcile), hold no children and capture no output: this plays the part of the widget
manager for them, not for ipywidgets' own controls.

Typical use in a test::

    with BrowserLikeKernel(tmp_path) as kernel:
        result = kernel.execute("%atomic_agent conversations")
        (output,) = result.widget_ids
        kernel.send_custom(output, {"type": "resume", "row": "0"})
        kernel.wait_for(lambda: ..., what="the resume to happen")

Waiting never sleeps blindly: every wait blocks on the kernel's sockets with a
short timeout and re-checks its condition against a monotonic deadline.
"""

from __future__ import annotations

import os
import queue
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import zmq
from ipykernel.kernelspec import get_kernel_dict
from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
from jupyter_client.manager import KernelManager

from .output_page import PageView, as_sent
from .thread_guard import KERNEL_INSTALL, assert_no_offthread_widget_work

#: What our output widget's own module starts with (how the page's store of an output is
#: recognised; its page side comes from the holder model, see ui/output_widget.py).
OUTPUT_MODULE_MARK = 'const key = "__atomicOutput_'

__all__ = [
    "BrowserLikeKernel",
    "CellError",
    "DisplayRecord",
    "ExecResult",
    "KernelTimeout",
    "SHOWN_IN",
    "StreamChunk",
    "WidgetStateTracker",
    "strip_ansi",
]

T = TypeVar("T")

#: Comm target of ipywidgets models.
WIDGET_TARGET = "jupyter.widget"
#: Mime type of a displayed widget view.
WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"

#: IOPub message types that carry output for an output area.
_OUTPUT_TYPES = frozenset(
    {"stream", "display_data", "execute_result", "error", "clear_output", "update_display_data"}
)
#: Models left out of :meth:`WidgetStateTracker.summary` to keep it short.
_NOISY_MODEL_SUFFIXES = ("LayoutModel", "StyleModel")

#: Where JupyterLab shows an IOPub output, by the request it belongs to:
#: ``"cell"`` the output area of a cell still running (before its idle status);
#: ``"log"`` the log console: output of a widget comm message (e.g. a callback);
#: ``"dropped"`` nowhere: the request already finished or was not sent by this
#: client (typically a thread printing after its cell ended).
SHOWN_IN = ("cell", "log", "dropped")

_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
_POLL_SLICE = 0.05
_ALIVE_CHECK_EVERY = 1.0
_MAX_BATCH = 500


def strip_ansi(text: str) -> str:
    """Remove ANSI colour and cursor escape sequences.

    Parameters
    ----------
    text : str
        Text as produced by IPython's coloured tracebacks.

    Returns
    -------
    str
        The same text without escape sequences.
    """
    return _ANSI_RE.sub("", text)


def _parent_id(msg: Mapping[str, Any]) -> str | None:
    parent = msg.get("parent_header") or {}
    return parent.get("msg_id") or None


def _parent_type(msg: Mapping[str, Any]) -> str | None:
    parent = msg.get("parent_header") or {}
    return parent.get("msg_type") or None


# --------------------------------------------------------------------------- records


class CellError(AssertionError):
    """A cell run with ``check=True`` ended in an error.

    Attributes
    ----------
    result : ExecResult
        The full result of the failed cell.
    """

    def __init__(self, result: ExecResult) -> None:
        self.result = result
        super().__init__(
            f"cell raised {result.ename}: {result.evalue}\n"
            f"--- code ---\n{result.code}\n"
            f"--- traceback ---\n{result.plain_traceback}\n"
            f"--- stdout ---\n{result.stdout}--- stderr ---\n{result.stderr}"
        )


class KernelTimeout(AssertionError):
    """A wait on the kernel did not finish before its deadline."""


@dataclass(frozen=True)
class StreamChunk:
    """One ``stream`` message seen on IOPub.

    Attributes
    ----------
    name : str
        ``"stdout"`` or ``"stderr"``.
    text : str
        The text of the message.
    parent_msg_id, parent_msg_type : str or None
        The request the kernel attributed the output to (an ``execute_request``,
        a ``comm_msg`` for widget callbacks, or whatever a thread inherited).
    shown_in : str
        Where JupyterLab would show it, see :data:`SHOWN_IN`.
    """

    name: str
    text: str
    parent_msg_id: str | None
    parent_msg_type: str | None
    shown_in: str


@dataclass(frozen=True)
class DisplayRecord:
    """One ``display_data``, ``update_display_data`` or ``execute_result`` message.

    Attributes
    ----------
    msg_type : str
        The IOPub message type.
    data : dict
        The mime bundle.
    metadata : dict
        The mime metadata.
    transient : dict
        Transient data, e.g. ``{"display_id": ...}``.
    parent_msg_id, parent_msg_type : str or None
        The request the kernel attributed the output to.
    shown_in : str
        Where JupyterLab would show it, see :data:`SHOWN_IN`.
    """

    msg_type: str
    data: dict[str, Any]
    metadata: dict[str, Any]
    transient: dict[str, Any]
    parent_msg_id: str | None
    parent_msg_type: str | None
    shown_in: str


@dataclass
class ExecResult:
    """What a browser would know about one executed cell.

    Attributes
    ----------
    msg_id : str
        The ``execute_request`` message id.
    code : str
        The code that ran.
    status : str
        ``"ok"``, ``"error"`` or ``"aborted"`` from the ``execute_reply``.
    execution_count : int or None
        The cell's execution count.
    ename, evalue : str or None
        Exception name and value when ``status == "error"``.
    traceback : list of str
        Traceback lines (with ANSI colours) when ``status == "error"``.
    outputs : list of dict
        Outputs shown in the cell's output area, in order, in nbformat shape
        (``output_type`` is one of ``stream``, ``display_data``,
        ``execute_result``, ``error``, ``update_display_data``,
        ``clear_output``).
    reply : dict
        Content of the ``execute_reply``.
    """

    msg_id: str
    code: str
    status: str = ""
    execution_count: int | None = None
    ename: str | None = None
    evalue: str | None = None
    traceback: list[str] = field(default_factory=list)
    outputs: list[dict[str, Any]] = field(default_factory=list)
    reply: dict[str, Any] = field(default_factory=dict)

    def _stream(self, name: str) -> str:
        return "".join(
            o["text"] for o in self.outputs if o["output_type"] == "stream" and o["name"] == name
        )

    @property
    def ok(self) -> bool:
        """Whether the cell finished without error."""
        return self.status == "ok"

    @property
    def stdout(self) -> str:
        """All ``stdout`` text shown in the cell."""
        return self._stream("stdout")

    @property
    def stderr(self) -> str:
        """All ``stderr`` text shown in the cell."""
        return self._stream("stderr")

    @property
    def displays(self) -> list[dict[str, Any]]:
        """Mime bundles of ``display_data`` and ``execute_result`` outputs, in order."""
        return [
            o["data"]
            for o in self.outputs
            if o["output_type"] in {"display_data", "execute_result"}
        ]

    @property
    def result(self) -> str | None:
        """``text/plain`` of the ``execute_result``, if the cell had one."""
        for o in self.outputs:
            if o["output_type"] == "execute_result":
                return o["data"].get("text/plain")
        return None

    @property
    def widget_ids(self) -> list[str]:
        """Model ids of widget views displayed directly in the cell."""
        return [d[WIDGET_VIEW_MIME]["model_id"] for d in self.displays if WIDGET_VIEW_MIME in d]

    @property
    def plain_traceback(self) -> str:
        """The traceback as one string without ANSI escapes."""
        return strip_ansi("\n".join(self.traceback))

    def raise_for_error(self) -> ExecResult:
        """Raise :class:`CellError` unless the cell succeeded.

        Returns
        -------
        ExecResult
            ``self``, for chaining.
        """
        if self.status != "ok":
            raise CellError(self)
        return self


@dataclass
class _Pending:
    """Book-keeping for an ``execute_request`` in flight."""

    result: ExecResult
    reply: dict[str, Any] | None = None
    idle: bool = False


# --------------------------------------------------------------------------- widget state


class WidgetStateTracker:
    """The page's copy of the widget models the kernel opened, fed from IOPub.

    Parameters
    ----------
    kernel : BrowserLikeKernel, optional
        Where a page that missed a message asks for the whole output.

    Attributes
    ----------
    models : dict
        ``comm_id -> state`` for every open ``jupyter.widget`` comm, updated in place.
    closed : dict
        ``comm_id -> last state`` for widget comms the kernel closed.
    other_comms : dict
        ``comm_id -> target_name`` for comms opened on other targets.
    custom_messages : list of tuple
        ``(comm_id, content, buffers)`` for each ``custom`` message the kernel
        sent to a widget (``Widget.send``).
    pages : dict
        ``comm_id -> PageView``: each of our outputs drawn by the page's own module, kept
        after it closed (as the page last showed it).
    """

    def __init__(self, kernel: BrowserLikeKernel | None = None) -> None:
        self._kernel = kernel
        self.models: dict[str, dict[str, Any]] = {}
        self.closed: dict[str, dict[str, Any]] = {}
        self.other_comms: dict[str, str] = {}
        self.custom_messages: list[tuple[str, dict[str, Any], list[bytes]]] = []
        self.pages: dict[str, PageView] = {}

    def handle(self, msg: Mapping[str, Any]) -> bool:
        """Fold one IOPub message into the model table; True when it was a comm message."""
        msg_type = msg["header"]["msg_type"]
        content = msg["content"]
        if msg_type == "comm_open":
            comm_id = content["comm_id"]
            if content.get("target_name") != WIDGET_TARGET:
                self.other_comms[comm_id] = content.get("target_name", "")
                return True
            state = dict((content.get("data") or {}).get("state") or {})
            self.closed.pop(comm_id, None)
            self.models[comm_id] = state
            if OUTPUT_MODULE_MARK in str(state.get("_esm", "")):
                # Our output's module, as the page runs it: its store asks for the output.
                view = self.pages[comm_id] = PageView(
                    str(state.get("root_class", "")), str(state.get("root_style", ""))
                )
                self._answer_page(comm_id, view.sent)
            return True
        if msg_type == "comm_msg":
            comm_id = content["comm_id"]
            model = self.models.get(comm_id)
            if model is None:
                return True
            data = content.get("data") or {}
            method = data.get("method")
            if method in {"update", "echo_update"}:
                model.update(data.get("state") or {})
            elif method == "custom":
                buffers = [bytes(b) for b in msg.get("buffers") or []]
                self.custom_messages.append((comm_id, data.get("content") or {}, buffers))
                view = self.pages.get(comm_id)
                if view is not None:
                    self._answer_page(comm_id, view.receive(data.get("content") or {}))
            return True
        if msg_type == "comm_close":
            comm_id = content["comm_id"]
            self.other_comms.pop(comm_id, None)
            state = self.models.pop(comm_id, None)
            if state is not None:
                self.closed[comm_id] = state
            return True
        return False

    def _answer_page(self, comm_id: str, sent: list[dict[str, Any]]) -> None:
        """Send the kernel what the page's module sent (its ``ready``), as the page does."""
        if self._kernel is not None:
            for message in sent:
                self._kernel.send_custom(comm_id, message)

    def describe(self, comm_id: str) -> str:
        """One-line description of a model: its name and its root's classes."""
        state = self.models.get(comm_id) or self.closed.get(comm_id) or {}
        parts = [str(state.get("_model_name", "?"))]
        if state.get("root_class"):
            parts.append(f"root_class={state['root_class']!r}")
        return " ".join(parts)

    def summary(self, limit: int = 40) -> str:
        """Multi-line listing of open models, without layout and style models."""
        lines = [
            f"  {cid[:8]} {self.describe(cid)}"
            for cid, state in self.models.items()
            if not str(state.get("_model_name", "")).endswith(_NOISY_MODEL_SUFFIXES)
        ]
        if len(lines) > limit:
            lines = [*lines[:limit], f"  ... and {len(lines) - limit} more"]
        return "\n".join(lines) if lines else "  (none)"


# --------------------------------------------------------------------------- kernel


class _InterpreterKernelSpecs(KernelSpecManager):
    """Resolves every kernel name to ipykernel on the running interpreter.

    The spec is the one ``ipykernel install`` would write (``sys.executable -m
    ipykernel_launcher``), so no installed kernelspec can redirect the tests
    to another Python.
    """

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        spec = get_kernel_dict()
        spec["argv"][0] = sys.executable
        return KernelSpec(resource_dir="", **spec)


class BrowserLikeKernel:
    """A real IPython kernel driven the way JupyterLab drives it.

    Use as a context manager; the kernel starts on entry and is shut down
    (and waited for) on exit.

    Parameters
    ----------
    cwd : str or os.PathLike
        Working directory of the kernel process.
    env : mapping, optional
        Extra environment variables, merged over :data:`os.environ`.
    startup_timeout : float
        Seconds to wait for the kernel to answer ``kernel_info``.
    kernel_args : sequence of str
        Extra command-line arguments for ``ipykernel_launcher``.
    transport_encryption : {"auto", "disabled", "required"}
        CurveZMQ policy of the kernel manager. ``"auto"`` (used when pyzmq has
        Curve) keeps ipykernel from warning about plain-text TCP on stderr;
        it does not change message semantics.
    thread_guard : bool
        Install the widget thread guard in the kernel at start (see
        :mod:`tests.harness.thread_guard`): widget work off the kernel's main
        thread is recorded, and leaving the ``with`` block without an error
        fails (``AssertionError``) when any was, before the kernel shuts down.

    Attributes
    ----------
    tracker : WidgetStateTracker
        Widget model state seen so far.
    streams : list of StreamChunk
        Every ``stream`` message seen on IOPub, from any request or thread,
        with where JupyterLab would have shown it.
    displays : list of DisplayRecord
        Every ``display_data``, ``update_display_data`` and ``execute_result``.
    errors : list of dict
        Content of every IOPub ``error`` message (failed cells and exceptions
        in widget callbacks), with ``parent_msg_id``, ``parent_msg_type`` and
        ``shown_in`` added.
    messages : list of dict
        Every IOPub message, in arrival order.
    """

    def __init__(
        self,
        cwd: str | os.PathLike[str],
        env: Mapping[str, str] | None = None,
        *,
        startup_timeout: float = 60.0,
        kernel_args: Sequence[str] = (),
        transport_encryption: str = "auto",
        thread_guard: bool = False,
    ) -> None:
        self.cwd = Path(cwd)
        self.thread_guard = thread_guard
        self.env = dict(env or {})
        self.startup_timeout = startup_timeout
        self.kernel_args = list(kernel_args)
        if thread_guard:
            self.kernel_args.append(f"--IPKernelApp.exec_lines={KERNEL_INSTALL}")
        if transport_encryption != "disabled" and not zmq.has("curve"):
            transport_encryption = "disabled"
        self.transport_encryption = transport_encryption

        self.tracker = WidgetStateTracker(self)
        self.streams: list[StreamChunk] = []
        self.displays: list[DisplayRecord] = []
        self.errors: list[dict[str, Any]] = []
        self.messages: list[dict[str, Any]] = []
        self.execution_state: str = "starting"
        #: Called with each IOPub message first; one that returns True took it (a stand-in
        #: notebook page, tests/harness/notebook_page.py).
        self.iopub_hooks: list[Callable[[dict[str, Any]], bool]] = []
        #: The same for shell replies to requests the hook's owner sent itself.
        self.shell_hooks: list[Callable[[dict[str, Any]], bool]] = []
        #: The subshell every comm message goes over (None: the main shell, as a page whose
        #: "Kernel Comms over subshells" setting is ``disabled``); see :meth:`create_subshell`.
        self.comm_subshell: str | None = None

        self._km: KernelManager | None = None
        self._kc: BlockingKernelClient | None = None
        self._poller: zmq.Poller | None = None
        self._pending: dict[str, _Pending] = {}
        self._idle_seen: set[str] = set()
        # Requests we sent whose idle status has not arrived ("futures" in
        # @jupyterlab/services terms): msg_id -> "execute" or "comm".
        self._live: dict[str, str] = {}
        self._last_alive_check = 0.0

    # ----------------------------------------------------------- lifecycle

    def __enter__(self) -> BrowserLikeKernel:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            km = self._km
            if exc_type is None and self.thread_guard and km is not None and km.is_alive():
                assert_no_offthread_widget_work(self)
        finally:
            self.close()

    def start(self) -> None:
        """Start the kernel and wait until it answers."""
        if self._km is not None:
            raise RuntimeError("kernel already started")
        env = {**os.environ, **self.env}
        km = KernelManager(
            kernel_name="python3",
            kernel_spec_manager=_InterpreterKernelSpecs(),
            transport_encryption=self.transport_encryption,
        )
        self._km = km
        try:
            km.start_kernel(cwd=str(self.cwd), env=env, extra_arguments=self.kernel_args)
            kc = km.client()
            kc.start_channels()
            self._kc = kc
            kc.wait_for_ready(timeout=self.startup_timeout)
            poller = zmq.Poller()
            poller.register(kc.iopub_channel.socket, zmq.POLLIN)
            poller.register(kc.shell_channel.socket, zmq.POLLIN)
            self._poller = poller
            self.drain()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Stop the channels and shut the kernel down, waiting for the process."""
        kc, km = self._kc, self._km
        self._kc = self._km = self._poller = None
        if kc is not None:
            kc.stop_channels()
        if km is not None:
            if km.has_kernel:
                km.shutdown_kernel(now=False)
            else:
                km.cleanup_resources()

    @property
    def km(self) -> KernelManager:
        """The :class:`~jupyter_client.manager.KernelManager`."""
        if self._km is None:
            raise RuntimeError("kernel not started")
        return self._km

    @property
    def kc(self) -> BlockingKernelClient:
        """The :class:`~jupyter_client.blocking.client.BlockingKernelClient`."""
        if self._kc is None:
            raise RuntimeError("kernel not started")
        return self._kc

    def interrupt(self) -> None:
        """Send the kernel an interrupt (SIGINT), like the stop button."""
        self.km.interrupt_kernel()

    # ----------------------------------------------------------- message pump

    def _pump(self, timeout: float) -> int:
        """Wait up to ``timeout`` seconds for IOPub/shell traffic and process all of it.

        Returns
        -------
        int
            Number of messages processed.
        """
        if self._poller is None:
            raise RuntimeError("kernel not started")
        kc = self.kc
        ready = dict(self._poller.poll(max(0, int(timeout * 1000))))
        if not ready:
            return 0
        count = 0
        # IOPub first: a reply is only complete together with its idle status.
        if kc.iopub_channel.socket in ready:
            count += self._read_all(kc.iopub_channel, self._on_iopub)
        if kc.shell_channel.socket in ready:
            count += self._read_all(kc.shell_channel, self._on_shell)
        return count

    @staticmethod
    def _read_all(channel: Any, handler: Callable[[dict[str, Any]], None]) -> int:
        """Handle the messages queued on ``channel`` (at most a batch, so deadlines hold)."""
        count = 0
        while count < _MAX_BATCH:
            try:
                msg = channel.get_msg(timeout=0)
            except queue.Empty:
                break
            handler(msg)
            count += 1
        return count

    def _check_alive(self) -> None:
        now = time.monotonic()
        if now - self._last_alive_check < _ALIVE_CHECK_EVERY:
            return
        self._last_alive_check = now
        if not self.km.is_alive():
            raise AssertionError("the kernel process died")

    def _wait_until(
        self, condition: Callable[[], T], timeout: float, describe: Callable[[], str]
    ) -> T:
        """Pump messages until ``condition()`` is truthy or the deadline passes."""
        deadline = time.monotonic() + timeout
        while True:
            value = condition()
            if value:
                return value
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise KernelTimeout(describe())
            self._pump(min(remaining, _POLL_SLICE))
            self._check_alive()

    def drain(self, timeout: float = 0.2) -> int:
        """Process IOPub and shell messages until none arrives for ``timeout`` seconds.

        Parameters
        ----------
        timeout : float
            Quiet period that ends the drain.

        Returns
        -------
        int
            Number of messages processed.
        """
        total = 0
        while True:
            n = self._pump(timeout)
            if n == 0:
                return total
            total += n

    def wait_for(
        self, predicate: Callable[[], T], timeout: float = 30.0, what: str = "condition"
    ) -> T:
        """Process IOPub until ``predicate()`` is truthy.

        Parameters
        ----------
        predicate : callable
            Checked before each wait for messages.
        timeout : float
            Seconds before giving up.
        what : str
            Description of the awaited event for the failure message.

        Returns
        -------
        object
            The truthy value ``predicate()`` returned.

        Raises
        ------
        KernelTimeout
            On timeout, naming ``what`` and listing widget states.
        """
        return self._wait_until(
            predicate,
            timeout,
            lambda: (
                f"timed out after {timeout}s waiting for {what}\n"
                f"widgets:\n{self.tracker.summary()}\n"
                f"recent output:\n{self._recent_output()}"
            ),
        )

    def wait_idle(self, msg_id: str, timeout: float = 10.0) -> None:
        """Wait for the ``idle`` status the kernel publishes after handling a request.

        Parameters
        ----------
        msg_id : str
            Id of a message sent on the shell channel (e.g. from :meth:`click`).
        timeout : float
            Seconds before giving up.

        Notes
        -----
        ipykernel 7.4 handles comm messages that arrive while an *async* cell
        is awaiting without any busy/idle status; waiting on such a message
        times out. Wait on an effect with :meth:`wait_for` instead.
        """
        self.wait_for(lambda: msg_id in self._idle_seen, timeout, f"idle after {msg_id}")

    def _recent_output(self, n: int = 10) -> str:
        chunks = [f"  [{s.name}] {s.text!r}" for s in self.streams[-n:]]
        chunks += [f"  [error] {e.get('ename')}: {e.get('evalue')}" for e in self.errors[-3:]]
        return "\n".join(chunks) if chunks else "  (none)"

    # ----------------------------------------------------------- handlers

    def _on_shell(self, msg: dict[str, Any]) -> None:
        if any(hook(msg) for hook in list(self.shell_hooks)):
            return
        pending = self._pending.get(_parent_id(msg) or "")
        if pending is not None and msg["header"]["msg_type"] == "execute_reply":
            pending.reply = msg["content"]

    def _on_iopub(self, msg: dict[str, Any]) -> None:
        self.messages.append(msg)
        msg_type = msg["header"]["msg_type"]
        content = msg["content"]
        parent = _parent_id(msg)
        if any(hook(msg) for hook in list(self.iopub_hooks)):
            return
        if self.tracker.handle(msg):
            return
        if msg_type == "status":
            self.execution_state = content.get("execution_state", self.execution_state)
            if content.get("execution_state") == "idle" and parent:
                self._idle_seen.add(parent)
                self._live.pop(parent, None)
                pending = self._pending.get(parent)
                if pending is not None:
                    pending.idle = True
            return
        if msg_type not in _OUTPUT_TYPES:
            return
        output = self._to_output(msg_type, content)
        live = self._live.get(parent or "")
        shown_in = "dropped" if live is None else "cell" if live == "execute" else "log"
        ptype = _parent_type(msg)
        if msg_type == "stream":
            self.streams.append(
                StreamChunk(content["name"], content["text"], parent, ptype, shown_in)
            )
        elif msg_type in {"display_data", "update_display_data", "execute_result"}:
            self.displays.append(
                DisplayRecord(
                    msg_type,
                    content.get("data") or {},
                    content.get("metadata") or {},
                    content.get("transient") or {},
                    parent,
                    ptype,
                    shown_in,
                )
            )
        elif msg_type == "error":
            self.errors.append(
                {
                    **content,
                    "parent_msg_id": parent,
                    "parent_msg_type": ptype,
                    "shown_in": shown_in,
                }
            )

        if shown_in == "cell":
            pending = self._pending.get(parent or "")
            if pending is not None:
                pending.result.outputs.append(output)

    @staticmethod
    def _to_output(msg_type: str, content: Mapping[str, Any]) -> dict[str, Any]:
        if msg_type == "stream":
            return {"output_type": "stream", "name": content["name"], "text": content["text"]}
        if msg_type == "error":
            return {
                "output_type": "error",
                "ename": content.get("ename"),
                "evalue": content.get("evalue"),
                "traceback": list(content.get("traceback") or []),
            }
        if msg_type == "clear_output":
            return {"output_type": "clear_output", "wait": bool(content.get("wait"))}
        out: dict[str, Any] = {
            "output_type": msg_type,
            "data": content.get("data") or {},
            "metadata": content.get("metadata") or {},
        }
        if msg_type == "execute_result":
            out["execution_count"] = content.get("execution_count")
        if msg_type == "update_display_data" or (content.get("transient") or {}):
            out["transient"] = content.get("transient") or {}
        return out

    # ----------------------------------------------------------- executing

    def submit(
        self,
        code: str,
        *,
        stop_on_error: bool = True,
        allow_stdin: bool = True,
        cell_id: str | None = None,
    ) -> str:
        """Send an ``execute_request`` without waiting for it.

        Parameters
        ----------
        code : str
            Cell source.
        stop_on_error : bool
            Abort queued cells if this one fails (JupyterLab's default).
        allow_stdin : bool
            Whether the cell may ask for input: JupyterLab allows it (the default here, as a
            browser sends it), nbconvert and papermill do not.
        cell_id : str | None
            The notebook cell the code comes from, in the request's metadata (``cellId``), as
            JupyterLab sends it.

        Returns
        -------
        str
            The request's msg_id, for :meth:`collect`.
        """
        if cell_id is None:
            msg_id = self.kc.execute(code, allow_stdin=allow_stdin, stop_on_error=stop_on_error)
        else:
            content = {
                "code": code,
                "silent": False,
                "store_history": True,
                "user_expressions": {},
                "allow_stdin": allow_stdin,
                "stop_on_error": stop_on_error,
            }
            msg = self.kc.session.msg("execute_request", content, metadata={"cellId": cell_id})
            self.kc.shell_channel.send(msg)
            msg_id = msg["header"]["msg_id"]
        self._pending[msg_id] = _Pending(ExecResult(msg_id=msg_id, code=code))
        self._live[msg_id] = "execute"
        return msg_id

    def replied(self, msg_id: str) -> bool:
        """Whether a submitted cell's ``execute_reply`` came, among the messages read so far
        (a cell not yet :meth:`collect`-ed)."""
        return self._pending[msg_id].reply is not None

    def collect(self, msg_id: str, timeout: float = 60.0, check: bool = True) -> ExecResult:
        """Wait for a submitted cell's ``execute_reply`` and final ``idle`` status.

        Parameters
        ----------
        msg_id : str
            Id returned by :meth:`submit`.
        timeout : float
            Seconds before giving up.
        check : bool
            Raise :class:`CellError` if the cell did not succeed.

        Returns
        -------
        ExecResult
            The cell's outcome and outputs.
        """
        pending = self._pending[msg_id]
        self._wait_until(
            lambda: pending.reply is not None and pending.idle,
            timeout,
            lambda: (
                f"cell did not finish within {timeout}s "
                f"(reply={'yes' if pending.reply is not None else 'no'}, "
                f"idle={'yes' if pending.idle else 'no'})\n--- code ---\n{pending.result.code}\n"
                f"--- outputs so far ---\n{pending.result.outputs!r}\n"
                f"widgets:\n{self.tracker.summary()}"
            ),
        )
        del self._pending[msg_id]
        result = pending.result
        reply = pending.reply or {}
        result.reply = reply
        result.status = reply.get("status", "")
        result.execution_count = reply.get("execution_count")
        if result.status == "error":
            result.ename = reply.get("ename")
            result.evalue = reply.get("evalue")
            result.traceback = list(reply.get("traceback") or [])
        if check:
            result.raise_for_error()
        return result

    def execute(
        self,
        code: str,
        timeout: float = 60.0,
        check: bool = True,
        *,
        allow_stdin: bool = True,
        cell_id: str | None = None,
    ) -> ExecResult:
        """Run a cell and wait for it to finish, processing all IOPub traffic meanwhile.

        Parameters
        ----------
        code : str
            Cell source.
        timeout : float
            Seconds before giving up.
        check : bool
            Raise :class:`CellError` (an AssertionError) if the cell errored.
        allow_stdin, cell_id
            As :meth:`submit`.

        Returns
        -------
        ExecResult
            The cell's outcome and outputs.
        """
        return self.collect(
            self.submit(code, allow_stdin=allow_stdin, cell_id=cell_id),
            timeout=timeout,
            check=check,
        )

    # ----------------------------------------------------------- acting on widgets

    def create_subshell(self, timeout: float = 10.0) -> str:
        """Ask the kernel for a subshell (JEP 91: a shell thread of its own), on the control
        channel, as JupyterLab does for its comms; return its id.

        Parameters
        ----------
        timeout : float
            Seconds to wait for the reply.

        Returns
        -------
        str
            The new subshell's id (for :attr:`comm_subshell`, or ``subshell=`` of
            :meth:`send_comm_msg`).
        """
        kc = self.kc
        msg = kc.session.msg("create_subshell_request", {})
        kc.control_channel.send(msg)
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise KernelTimeout(f"no create_subshell_reply within {timeout}s")
            try:
                reply = kc.control_channel.get_msg(timeout=remaining)
            except queue.Empty:
                continue
            if _parent_id(reply) != msg["header"]["msg_id"]:
                continue  # a reply to another control request
            content = reply["content"]
            if content.get("status") != "ok":
                raise AssertionError(f"the kernel made no subshell: {content}")
            return str(content["subshell_id"])

    def send_comm_msg(
        self,
        comm_id: str,
        data: dict[str, Any],
        buffers: Sequence[bytes] = (),
        *,
        subshell: str | None = None,
    ) -> str:
        """Send a ``comm_msg`` on the shell channel, as the browser's comm does.

        Parameters
        ----------
        comm_id : str
            Target comm.
        data : dict
            The message's ``data``.
        buffers : sequence of bytes
            Binary buffers.
        subshell : str, optional
            The subshell the message is for (its header's ``subshell_id``); by default
            :attr:`comm_subshell`, as JupyterLab sends comm messages over a subshell per comm
            target ("Kernel Comms over subshells": ``perCommTarget``).

        Returns
        -------
        str
            msg_id of the sent message.
        """
        kc = self.kc
        msg = kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        subshell = subshell if subshell is not None else self.comm_subshell
        if subshell is not None:
            msg["header"]["subshell_id"] = subshell
        kc.session.send(kc.shell_channel.socket, msg, buffers=list(buffers) or None)
        msg_id = str(msg["header"]["msg_id"])
        self._live[msg_id] = "comm"
        return msg_id

    def send_custom(self, comm_id: str, content: dict[str, Any]) -> str:
        """Send a ``custom`` widget message (what ``model.send(content)`` does in JS); one of
        the page protocol's with no version (``v``) is given the protocol's, as the page's
        module gives every message it sends."""
        return self.send_comm_msg(comm_id, {"method": "custom", "content": as_sent(content)})

    # ----------------------------------------------------------- widget queries

    @property
    def models(self) -> dict[str, dict[str, Any]]:
        """``comm_id -> state`` of open widget models (see :class:`WidgetStateTracker`)."""
        return self.tracker.models

    # ----------------------------------------------------------- output summaries

    @property
    def stdout_text(self) -> str:
        """All ``stdout`` text seen on IOPub, wherever it was shown."""
        return "".join(s.text for s in self.streams if s.name == "stdout")

    def iter_messages(self, msg_type: str | None = None) -> Iterator[dict[str, Any]]:
        """IOPub messages seen so far, optionally of one type."""
        return (m for m in self.messages if msg_type is None or m["header"]["msg_type"] == msg_type)
