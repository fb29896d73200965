"""A stand-in agent for fault injection: speaks the RPC protocol, misbehaves on request.

It answers ``get_state`` and ``get_commands`` like the real agent, and runs a scenario for a
prompt ``/scenario NAME [ARG]``. It reports what it received with ``notify`` lines, so tests
can check that no answer was lost or sent twice. Usage: ``python tests/harness/standin_agent.py --mode rpc``.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

out = sys.stdout.buffer
received: dict[str, int] = {}
counter = {"dialogs": 0}


def emit(value: dict) -> None:
    out.write(json.dumps(value, separators=(",", ":")).encode() + b"\n")
    out.flush()


def notify(message: str) -> None:
    emit(
        {
            "type": "extension_ui_request",
            "id": f"n-{time.monotonic_ns()}",
            "method": "notify",
            "message": message,
            "notifyType": "info",
        }
    )


#: Like the real agent, a command that raised dialogs is answered once they are all answered
#: (its handler awaits them): prompt id -> the dialog ids still open.
awaiting: dict[str, set[str]] = {}
current_prompt: list[str] = []
said: list[str] = [""]  # the prompt's text, which the agent echoes as the user's message


def dialog(dialog_id: str, title: str = "Choose", options: tuple[str, ...] = ("A", "B")) -> None:
    if current_prompt:
        awaiting.setdefault(current_prompt[-1], set()).add(dialog_id)
    emit(
        {
            "type": "extension_ui_request",
            "id": dialog_id,
            "method": "select",
            "title": title,
            "options": list(options),
        }
    )


def scenario(name: str, arg: str, prompt_id: str) -> None:
    if name == "flood":
        for i in range(1, int(arg or 100000) + 1):
            emit(
                {
                    "type": "extension_ui_request",
                    "id": f"s{i}",
                    "method": "setStatus",
                    "statusKey": "flood",
                    "statusText": f"{i}",
                }
            )
        notify(f"flood done {arg}")
    elif name == "bigline":
        out.write(b"x" * (int(arg or 50) * 1024 * 1024) + b"\n")
        notify("after the big line")
    elif name == "bigevent":  # a valid event of a type nobody knows, of ARG MB
        blob = "y" * (int(arg or 50) * 1024 * 1024)
        out.write(b'{"type":"mystery_event","blob":"' + blob.encode() + b'"}\n')
        notify("after the big event")
    elif name == "badutf8":
        out.write(b"\xff\xfe\xfd not utf-8 \xc3\x28\n")
        notify("after bad utf-8")
    elif name == "stray":
        emit(
            {
                "type": "response",
                "id": "nobody-asked",
                "command": "get_state",
                "success": True,
                "data": {},
            }
        )
        notify("after the stray response")
    elif name == "dup":
        dialog("dup-1", "Duplicated")
        dialog("dup-1", "Duplicated")
    elif name == "deaf":
        dialog("deaf-1", "Nobody will read this answer")
        emit({"id": prompt_id, "type": "response", "command": "prompt", "success": True})
        signal.pause()  # never reads stdin again
    elif name == "mute":
        emit({"id": prompt_id, "type": "response", "command": "prompt", "success": True})
        os.close(1)
        signal.pause()  # keeps running with its output closed
    elif name == "dialogs":
        for _ in range(int(arg or 10)):
            counter["dialogs"] += 1
            dialog(f"soak-{counter['dialogs']}", f"Soak {counter['dialogs']}")
    elif name == "leak":  # an agent careless with secrets: everywhere it can write
        secrets = [v for k, v in os.environ.items() if "MARKER" in k]
        sys.stderr.write("environment: " + " ".join(secrets) + "\n")
        sys.stderr.flush()
        notify("my secrets: " + " ".join(secrets))
        shown = " ".join(secrets)
        for method, fields in (
            ("setStatus", {"statusKey": "leak", "statusText": "key " + shown}),
            ("setTitle", {"title": "title " + shown}),
            ("setWidget", {"widgetKey": "leak", "widgetLines": ["widget " + shown]}),
            ("set_editor_text", {"text": "editor " + shown}),
        ):
            emit(
                {"type": "extension_ui_request", "id": f"leak-{method}", "method": method, **fields}
            )
        dialog("leak-dialog", title="confirm key " + shown, options=("use " + shown, "no"))
        emit({"type": "agent_start"})
        text = {"role": "assistant", "content": [{"type": "text", "text": "answer " + shown}]}
        emit({"type": "message_start", "message": text})
        emit({"type": "message_end", "message": text})
        result = {"content": [{"type": "text", "text": "tool output " + shown}]}
        emit(
            {
                "type": "tool_execution_start",
                "toolCallId": "t1",
                "toolName": "bash",
                "args": {"command": "echo " + shown},
            }
        )
        emit(
            {
                "type": "tool_execution_end",
                "toolCallId": "t1",
                "toolName": "bash",
                "result": result,
                "isError": False,
            }
        )
        emit({"type": "extension_error", "extensionPath": "x.ts", "event": "e", "error": shown})
        emit(
            {
                "id": prompt_id,
                "type": "response",
                "command": "prompt",
                "success": False,
                "error": "refused, key " + " ".join(secrets),
            }
        )
        os._exit(1)
    elif (
        name == "stream"
    ):  # a run the way the agent streams it: the whole partial message each time
        emit({"type": "agent_start"})
        emit(
            {
                "type": "message_start",
                "message": {"role": "user", "content": [{"type": "text", "text": said[-1]}]},
            }
        )
        emit({"type": "message_start", "message": {"role": "assistant", "content": []}})
        text = ""
        for i in range(int(arg or 200)):
            delta = f"word{i} "
            text += delta
            partial = {"role": "assistant", "content": [{"type": "text", "text": text}]}
            emit(
                {
                    "type": "message_update",
                    "message": partial,
                    "assistantMessageEvent": {
                        "type": "text_delta",
                        "contentIndex": 0,
                        "delta": delta,
                        "partial": partial,
                    },
                }
            )
        final = {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "usage": {"input": 1, "output": 2},
        }
        emit({"id": prompt_id, "type": "response", "command": "prompt", "success": True})
        emit({"type": "message_end", "message": final})
        emit({"type": "agent_end", "messages": [final]})
        return
    elif name == "noend":  # a run whose end never comes, though the agent is idle
        emit(
            {
                "id": prompt_id,
                "type": "response",
                "command": "prompt",
                "success": True,
                "data": {"disposition": "started"},
            }
        )
        emit({"type": "agent_start"})
        return
    elif name == "crash":
        dialog("crash-1", "Doomed")
        os.kill(os.getpid(), signal.SIGKILL)
    elif name == "enobufs":  # how the 0.73 line dies streaming a long answer at full speed
        emit({"type": "agent_start"})
        emit({"id": prompt_id, "type": "response", "command": "prompt", "success": True})
        sys.stderr.write(
            "node:events:497\n      throw er; // Unhandled 'error' event\n\n"
            "Error: write ENOBUFS\n    at afterWriteDispatched (node:internal/stream_base_commons:159:15)\n"
        )
        sys.stderr.flush()
        os._exit(1)
    if not awaiting.get(prompt_id):
        emit({"id": prompt_id, "type": "response", "command": "prompt", "success": True})


def answered(dialog_id: str) -> None:
    """A dialog was answered: answer the command that waits for no other."""
    for prompt_id, ids in list(awaiting.items()):
        ids.discard(dialog_id)
        if not ids:
            del awaiting[prompt_id]
            emit({"id": prompt_id, "type": "response", "command": "prompt", "success": True})


def main() -> None:
    for raw in sys.stdin.buffer:
        command = json.loads(raw)
        kind, cid = command.get("type"), command.get("id")
        if kind == "get_state":
            emit(
                {
                    "id": cid,
                    "type": "response",
                    "command": kind,
                    "success": True,
                    "data": {"isStreaming": False, "isCompacting": False},
                }
            )
        elif kind == "get_commands":
            emit(
                {
                    "id": cid,
                    "type": "response",
                    "command": kind,
                    "success": True,
                    "data": {"commands": []},
                }
            )
        elif kind == "extension_ui_response":
            key = command["id"]
            received[key] = received.get(key, 0) + 1
            notify(
                f"received {key} x{received[key]}: {json.dumps({k: v for k, v in command.items() if k not in ('type', 'id')})}"
            )
            answered(key)
        elif kind == "prompt":
            words = command.get("message", "").split()
            if len(words) >= 2 and words[0] == "/scenario":
                current_prompt.append(cid)
                said.append(command.get("message", ""))
                scenario(words[1], words[2] if len(words) > 2 else "", cid)
                current_prompt.pop()
            else:
                emit({"id": cid, "type": "response", "command": kind, "success": True})
        else:
            emit(
                {
                    "id": cid,
                    "type": "response",
                    "command": kind,
                    "success": False,
                    "error": f"Unknown command: {kind}",
                }
            )


if __name__ == "__main__":
    main()
