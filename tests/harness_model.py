"""A loopback stand-in for the model APIs the real agent harnesses call.

One scripted turn per test: the first request of the agent's main loop is
answered with one tool call (tool T, input I); the request that brings that
tool's result back is recorded and answered with a short text that ends the
turn. Every other request a harness makes (a title or summary request, token
counting, a model-router classifier, a quota or settings lookup) gets a
harmless answer, so nothing waits on a host the test cannot reach.

It speaks, as the shipped harnesses call them:

- Anthropic Messages (Claude Code 2.1.197, ``ANTHROPIC_BASE_URL``):
  ``POST /v1/messages`` (``"stream": true`` is answered as server-sent events:
  ``message_start``, ``content_block_start`` / ``content_block_delta``
  (``text_delta``, ``input_json_delta``) / ``content_block_stop``,
  ``message_delta`` with the ``stop_reason``, ``message_stop``; otherwise one
  JSON message) and ``POST /v1/messages/count_tokens``.
- Gemini (Gemini CLI 0.61.0, ``GOOGLE_GEMINI_BASE_URL`` with an API key):
  ``POST /v1beta/models/M:generateContent``, ``…:streamGenerateContent``
  (``?alt=sse``: ``data: <GenerateContentResponse>`` events) and
  ``…:countTokens``.
- OpenAI Responses (Codex CLI 0.171.0, a ``[model_providers.X]`` with
  ``wire_api = "responses"``): ``POST /v1/responses`` with ``"stream":
  true``, answered as the events Codex reads: ``response.created``,
  ``response.output_item.done`` (a ``function_call`` with JSON
  ``arguments``, or a ``custom_tool_call`` with its freeform ``input`` for a
  tool the request declares ``"type": "custom"``, such as ``apply_patch``;
  or the closing ``message``) and ``response.completed`` with its usage. A
  result comes back as a ``function_call_output`` or
  ``custom_tool_call_output`` item of the next request's ``input``.
- OpenAI Chat Completions (Qwen Code 0.24.4, OpenCode 1.18.33, Copilot CLI
  1.0.102, Cline 3.0.65, each pointed at an OpenAI-compatible base URL):
  ``POST /v1/chat/completions``; ``"stream": true`` is answered with
  ``data: <chunk>`` events (one ``delta`` with the ``tool_calls``, one with
  the ``finish_reason`` and usage) and ``data: [DONE]``. A result comes back
  as a ``{"role": "tool"}`` message, its content a string or text parts.

The main loop's request is told from a side request by its tool list: only
the main loop offers the scripted tool.
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Script:
    """Call the tools of ``steps`` one after the other, each once its
    predecessor's result came back; record the results, then end the turn.

    Stateless per request: the results already in a request's conversation
    say which step is next, so a harness's retry gets the same answer."""

    steps: list[tuple[str, dict[str, Any]]]
    tool_results: list[str] = field(default_factory=list)  # the texts handed back, in order
    requests: list[str] = field(default_factory=list)  # "METHOD path", for a failure message
    # Each main-loop request's body as it came (JSON text): what the model was
    # shown beside the tool results (a hook's added context, say).
    turns: list[str] = field(default_factory=list)
    bodies: list[dict[str, Any]] = field(default_factory=list)  # each POST's JSON, in order
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def tools(self) -> set[str]:
        return {name for name, _ in self.steps}

    def next_step(self, results: list[str]) -> tuple[str, dict[str, Any]] | None:
        """The call to make after ``results`` came back, or None: end the turn."""
        with self.lock:
            if len(results) >= len(self.tool_results):
                self.tool_results = list(results)
        return self.steps[len(results)] if len(results) < len(self.steps) else None

    def last_result(self) -> str | None:
        """What the last step's tool handed back (None: it never came back)."""
        with self.lock:
            done = len(self.tool_results) >= len(self.steps)
            return self.tool_results[len(self.steps) - 1] if done else None


def _anthropic_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_anthropic_text(c.get("text", c.get("content", ""))) for c in content)
    return str(content)


class _Handler(BaseHTTPRequestHandler):
    server_version = "harness-model/1"
    protocol_version = "HTTP/1.1"
    script: Script  # set on the class made per server

    def log_message(self, format: str, *args: Any) -> None:  # quiet: failures print requests
        pass

    # --- plumbing ---------------------------------------------------------

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            data = json.loads(raw or b"{}")
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}

    def _json(self, data: Any, status: int = 200) -> None:
        body = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _sse(self, events: list[tuple[str | None, Any]]) -> None:
        chunks = []
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            chunks.append(f"{head}data: {json.dumps(data)}\n\n")
        body = "".join(chunks).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.script.requests.append(f"GET {self.path}")
        if self.path.split("?", 1)[0].endswith("/models"):  # a model list: none to offer
            self._json({"object": "list", "data": [], "models": []})
        else:
            self._json({})

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        self.script.requests.append(f"POST {self.path}")
        body = self._body()
        self.script.bodies.append(body)
        path = self.path.split("?", 1)[0]
        if path.endswith("/messages/count_tokens"):
            self._json({"input_tokens": 10})
        elif path.endswith("/messages"):
            self._anthropic(body)
        elif ":countTokens" in path:
            self._json({"totalTokens": 10})
        elif ":generateContent" in path or ":streamGenerateContent" in path:
            self._gemini(body, stream=":streamGenerateContent" in path)
        elif path.endswith("/responses"):
            self._responses(body)
        elif path.endswith("/chat/completions"):
            self._chat(body)
        else:
            self._json({})

    # --- Anthropic Messages ----------------------------------------------

    def _anthropic(self, body: dict[str, Any]) -> None:
        script = self.script
        tools = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
        blocks: list[dict[str, Any]]
        stop = "end_turn"
        if script.tools <= tools:
            with script.lock:
                script.turns.append(json.dumps(body))
            returned = [
                _anthropic_text(part.get("content", ""))
                for message in body.get("messages") or []
                if message.get("role") == "user" and isinstance(message.get("content"), list)
                for part in message["content"]
                if isinstance(part, dict) and part.get("type") == "tool_result"
            ]
            step = script.next_step(returned)
            if step is None:
                blocks = [{"type": "text", "text": "Done."}]
            else:
                blocks = [
                    {
                        "type": "tool_use",
                        "id": "toolu_" + uuid.uuid4().hex[:20],
                        "name": step[0],
                        "input": step[1],
                    }
                ]
                stop = "tool_use"
        else:  # a side request (a title, a summary, a quota probe): plain text
            blocks = [{"type": "text", "text": "Edit a file"}]
        model = str(body.get("model") or "claude-sonnet-4-5")
        usage = {"input_tokens": 10, "output_tokens": 5}
        message = {
            "id": "msg_" + uuid.uuid4().hex[:20],
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        if not body.get("stream"):
            self._json(message)
            return
        events: list[tuple[str | None, Any]] = [
            ("message_start", {"type": "message_start", "message": {**message, "content": []}})
        ]
        for index, block in enumerate(blocks):
            start: dict[str, Any]
            delta: dict[str, Any]
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                start = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": start},
                )
            )
            events.append(
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        events.append(
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 5},
                },
            )
        )
        events.append(("message_stop", {"type": "message_stop"}))
        self._sse(events)

    # --- Gemini generateContent -------------------------------------------

    def _gemini(self, body: dict[str, Any], stream: bool) -> None:
        script = self.script
        names = {
            d.get("name")
            for t in body.get("tools") or []
            if isinstance(t, dict)
            for d in t.get("functionDeclarations") or []
            if isinstance(d, dict)
        }
        parts: list[dict[str, Any]]
        if script.tools <= names:
            returned = [
                json.dumps(part["functionResponse"].get("response"))
                for content in body.get("contents") or []
                if isinstance(content, dict)
                for part in content.get("parts") or []
                if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict)
            ]
            step = script.next_step(returned)
            if step is None:
                parts = [{"text": "Done."}]
            else:
                parts = [{"functionCall": {"name": step[0], "args": step[1]}}]
        else:
            # A side request: the model router and the next-speaker check ask
            # for JSON (a responseSchema); text for anything else.
            config = body.get("generationConfig") or {}
            if config.get("responseMimeType") == "application/json":
                answer = {
                    "reasoning": "simple",
                    "model_choice": "flash",
                    "next_speaker": "user",
                    "complexity_reasoning": "simple",
                    "complexity_score": 1,
                }
                parts = [{"text": json.dumps(answer)}]
            else:
                parts = [{"text": "ok"}]
        response = {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": 10,
                "candidatesTokenCount": 5,
                "totalTokenCount": 15,
            },
            "modelVersion": "gemini-2.5-flash",
        }
        if stream:
            self._sse([(None, response)])
        else:
            self._json(response)

    # --- OpenAI Responses (Codex) -------------------------------------------

    def _responses(self, body: dict[str, Any]) -> None:
        script = self.script
        tools = {
            t.get("name"): t.get("type") for t in body.get("tools") or [] if isinstance(t, dict)
        }
        item: dict[str, Any]
        if script.tools <= set(tools):
            returned = [
                str(part.get("output", ""))
                for part in body.get("input") or []
                if isinstance(part, dict)
                and part.get("type") in ("function_call_output", "custom_tool_call_output")
            ]
            step = script.next_step(returned)
        else:
            step = None
        call_id = "call_" + uuid.uuid4().hex[:20]
        if step is None:
            item = {
                "type": "message",
                "id": "msg_" + uuid.uuid4().hex[:20],
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
            }
        elif tools.get(step[0]) == "custom":  # a freeform tool: its input is the text itself
            item = {
                "type": "custom_tool_call",
                "id": "ctc_" + uuid.uuid4().hex[:20],
                "call_id": call_id,
                "name": step[0],
                "input": step[1]["input"],
                "status": "completed",
            }
        else:
            item = {
                "type": "function_call",
                "id": "fc_" + uuid.uuid4().hex[:20],
                "call_id": call_id,
                "name": step[0],
                "arguments": json.dumps(step[1]),
                "status": "completed",
            }
        rid = "resp_" + uuid.uuid4().hex[:20]
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
        self._sse(
            [
                ("response.created", {"type": "response.created", "response": {"id": rid}}),
                (
                    "response.output_item.done",
                    {"type": "response.output_item.done", "output_index": 0, "item": item},
                ),
                (
                    "response.completed",
                    {"type": "response.completed", "response": {"id": rid, "usage": usage}},
                ),
            ]
        )

    # --- OpenAI Chat Completions ---------------------------------------------

    def _chat(self, body: dict[str, Any]) -> None:
        script = self.script
        names = {
            (t.get("function") or {}).get("name")
            for t in body.get("tools") or []
            if isinstance(t, dict)
        }
        step = None
        if script.tools <= names:
            returned = [
                _chat_text(message.get("content"))
                for message in body.get("messages") or []
                if isinstance(message, dict) and message.get("role") == "tool"
            ]
            step = script.next_step(returned)
        delta: dict[str, Any]
        if step is None:
            delta, finish = {"role": "assistant", "content": "Done."}, "stop"
        else:
            call = {
                "id": "call_" + uuid.uuid4().hex[:20],
                "type": "function",
                "function": {"name": step[0], "arguments": json.dumps(step[1])},
            }
            delta = {"role": "assistant", "content": None, "tool_calls": [{"index": 0, **call}]}
            finish = "tool_calls"
        base = {
            "id": "chatcmpl-" + uuid.uuid4().hex[:20],
            "created": 1,
            "model": str(body.get("model") or "stand"),
        }
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if not body.get("stream"):
            message = dict(delta)
            if "tool_calls" in message:
                message["tool_calls"] = [
                    {k: v for k, v in c.items() if k != "index"} for c in message["tool_calls"]
                ]
            choice = {"index": 0, "message": message, "finish_reason": finish}
            self._json({**base, "object": "chat.completion", "choices": [choice], "usage": usage})
            return
        chunk = {**base, "object": "chat.completion.chunk"}
        first = {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        last = {
            **chunk,
            "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
            "usage": usage,
        }
        data = f"data: {json.dumps(first)}\n\ndata: {json.dumps(last)}\n\ndata: [DONE]\n\n"
        raw = data.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


def _chat_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return json.dumps(content)


class ModelServer:
    """The stand-in on 127.0.0.1, on a free port, for one scripted turn."""

    def __init__(self, script: Script) -> None:
        handler = type("Handler", (_Handler,), {"script": script})
        self.script = script
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ModelServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
