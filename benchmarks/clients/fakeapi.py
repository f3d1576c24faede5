"""Fake model APIs on 127.0.0.1 that log what reaches the model.

One HTTP server answers the Anthropic Messages API (`/v1/messages`), the OpenAI Responses API
(`/v1/responses`) and the Gemini API (`/v1beta/models/M:generateContent`, `:streamGenerateContent`,
`:countTokens`), streamed or not, and records every request body. The "model" follows a script
written in the user's message: each `CALL <tool> <json arguments>` in it is one tool call, made in
order, one per turn, as the client hands back each result; then it answers `DONE`. A tool is named
as the server names it (`recall`); the client's name for it (`mcp__memcli__recall`,
`mcp_memcli_recall`, Codex's `recall` in the `mcp__memcli` namespace) is found in the request's
tool list. A test may also give a question's script aside (`FakeAPI.aside[question] = "CALL ..."`),
so that the prompt a client's hook reads is the question alone, and the model's last answer to a
request holding a question (`FakeAPI.replies[question] = "..."`; else `DONE`). Nothing here reaches beyond the
loopback interface.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CALL = re.compile(r"CALL (\S+) ")


def calls(text: str) -> list[tuple[str, dict]]:
    """The `CALL name {json}` steps of a message, in order."""
    out = []
    decoder = json.JSONDecoder()
    for m in CALL.finditer(text):
        try:
            args, _ = decoder.raw_decode(text, m.end())
        except ValueError:
            continue
        out.append((m.group(1), args))
    return out


def script_of(text: str, aside: dict) -> list[tuple[str, dict]]:
    """The steps written in a message, or those given aside for a question the message holds."""
    return calls(text) or [c for q, steps in aside.items() if q in text for c in calls(steps)]


def pick(name: str, tools: list[str]) -> str | None:
    """The client's name for the server's tool `name` (or a client tool of exactly that name)."""
    for t in tools:
        if t == name or t.endswith("__" + name) or t == f"mcp_memcli_{name}" or t.endswith("." + name):
            return t
    return None


MAX_REQUESTS = 100  # past this many requests the model only answers DONE: a client that loses tool
# results (and so asks again and again) ends, and its check fails, instead of hanging


def step(script: list, done: int, tools: list[str]):
    """(client tool name, arguments) of the next call, or None when the script is done."""
    if done >= len(script):
        return None
    name, args = script[done]
    found = pick(name, tools)
    return (found, args) if found else None


class Recorder:
    def __init__(self):
        self.requests: list[dict] = []
        self.aside: dict[str, str] = {}
        self.replies: dict[str, str] = {}
        self.lock = threading.Lock()

    def final(self, body) -> str:
        """The model's answer once the script is done: a reply given for a question the request holds."""
        said = json.dumps(body, ensure_ascii=False)
        return next((text for q, text in self.replies.items() if q in said), "DONE")

    def add(self, api: str, path: str, body):
        with self.lock:
            self.requests.append({"api": api, "path": path, "body": body})


def _anthropic_texts(body) -> list[str]:
    out = []
    for m in body.get("messages", []):
        c = m.get("content")
        if isinstance(c, str):
            out.append(c)
            continue
        for b in c or []:
            if b.get("type") == "text":
                out.append(b.get("text", ""))
    return out


class Handler(BaseHTTPRequestHandler):
    server_version = "fakeapi/1"

    def log_message(self, *args):  # quiet
        pass

    def _body(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {"raw": raw.decode("utf-8", "replace")}

    def _send(self, code, obj=None, sse=None):
        if sse is not None:
            data = "".join((f"event: {ev}\n" if ev else "") + f"data: {json.dumps(d)}\n\n" for ev, d in sse).encode()
            ctype = "text/event-stream"
        else:
            data = json.dumps(obj).encode()
            ctype = "application/json"
        self.send_response(code)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.server.recorder.add("get", self.path, None)
        self._send(404, {"error": {"message": "not found"}})

    def do_HEAD(self):
        self.send_response(200)
        self.end_headers()

    def do_POST(self):
        body = self._body()
        path = self.path
        if len(self.server.recorder.requests) >= MAX_REQUESTS:
            body = {**body, "tools": []} if isinstance(body, dict) else body  # no tool to call: DONE
        if path.startswith("/v1/messages"):
            self.server.recorder.add("anthropic", path, body)
            return self.anthropic(path, body)
        if path.startswith("/v1/responses"):
            self.server.recorder.add("openai", path, body)
            return self.openai(body)
        if "/models/" in path:
            self.server.recorder.add("gemini", path, body)
            return self.gemini(path, body)
        self.server.recorder.add("other", path, body)
        self._send(404, {"error": {"message": "not found"}})

    # --- Anthropic Messages
    def anthropic(self, path, body):
        if path.startswith("/v1/messages/count_tokens"):
            return self._send(200, {"input_tokens": 10})
        script, done = [], 0
        for msg in reversed(body.get("messages", [])):
            content = msg.get("content")
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
            if msg.get("role") == "user":
                script = script_of(
                    " ".join(b.get("text", "") for b in blocks if b.get("type") == "text"), self.server.recorder.aside
                )
                if script:
                    break
            done += sum(b.get("type") == "tool_result" for b in blocks)
        nxt = step(script, done, [t.get("name", "") for t in body.get("tools", [])])
        name, m = (nxt[0], json.dumps(nxt[1])) if nxt else (None, None)
        model = body.get("model", "claude")
        if name:
            block = {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:24]}", "name": name, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": m}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": "DONE"}
            stop = "end_turn"
        usage = {"input_tokens": 10, "output_tokens": 1}
        if not name:
            delta["text"] = self.server.recorder.final(body)
        if not body.get("stream"):
            full = dict(block)
            if name:
                full["input"] = json.loads(m)
            else:
                full["text"] = delta["text"]
            return self._send(
                200,
                {
                    "id": "msg_01",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [full],
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": usage,
                },
            )
        self._send(
            200,
            sse=[
                (
                    "message_start",
                    {
                        "type": "message_start",
                        "message": {
                            "id": "msg_01",
                            "type": "message",
                            "role": "assistant",
                            "model": model,
                            "content": [],
                            "stop_reason": None,
                            "stop_sequence": None,
                            "usage": usage,
                        },
                    },
                ),
                ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
                ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                (
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": stop, "stop_sequence": None},
                        "usage": {"output_tokens": 1},
                    },
                ),
                ("message_stop", {"type": "message_stop"}),
            ],
        )

    # --- OpenAI Responses
    def openai(self, body):
        script, done = [], 0
        for item in reversed(body.get("input", [])):
            if item.get("type") == "message" and item.get("role") == "user":
                c = item.get("content")
                script = script_of(
                    c if isinstance(c, str) else " ".join(p.get("text", "") for p in c or []),
                    self.server.recorder.aside,
                )
                if script:
                    break
            done += item.get("type") == "function_call_output"
        names = []
        for t in body.get("tools", []):
            names.append(t.get("name", ""))
            for sub in t.get("tools", []) or []:  # a namespace of tools
                names.append(f"{t.get('name')}.{sub.get('name')}")
        nxt = step(script, done, names)
        name = nxt[0] if nxt else None
        if name:
            item = {
                "type": "function_call",
                "id": f"fc_{uuid.uuid4().hex[:24]}",
                "name": name,
                "call_id": f"call_{uuid.uuid4().hex[:24]}",
                "arguments": json.dumps(nxt[1]),
                "status": "completed",
            }
            if "." in name:
                ns, short = name.rsplit(".", 1)
                item.update(name=short, namespace=ns)
        else:
            item = {
                "type": "message",
                "id": "msg_01",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": self.server.recorder.final(body), "annotations": []}],
            }
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 1,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 11,
        }
        resp = {
            "id": "resp_01",
            "object": "response",
            "status": "completed",
            "model": body.get("model"),
            "output": [item],
            "usage": usage,
        }
        if not body.get("stream"):
            return self._send(200, resp)
        self._send(
            200,
            sse=[
                (
                    "response.created",
                    {"type": "response.created", "response": {**resp, "status": "in_progress", "output": []}},
                ),
                ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
                ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
                ("response.completed", {"type": "response.completed", "response": resp}),
            ],
        )

    # --- Gemini
    def gemini(self, path, body):
        if ":countTokens" in path:
            return self._send(200, {"totalTokens": 10})
        script, done = [], 0
        for content in reversed(body.get("contents", [])):
            parts = content.get("parts", [])
            if content.get("role") == "user":
                script = script_of(
                    " ".join(p.get("text", "") for p in parts if "text" in p), self.server.recorder.aside
                )
                if script:
                    break
            done += sum("functionResponse" in p for p in parts)
        names = [f.get("name", "") for t in body.get("tools", []) for f in t.get("functionDeclarations", []) or []]
        nxt = step(script, done, names)
        part = {"functionCall": {"name": nxt[0], "args": nxt[1]}} if nxt else {"text": self.server.recorder.final(body)}
        resp = {
            "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 1, "totalTokenCount": 11},
            "modelVersion": "gemini-fake",
        }
        if ":streamGenerateContent" in path:
            return self._send(200, sse=[(None, resp)])
        self._send(200, resp)


class FakeAPI:
    """The fake model APIs, serving on 127.0.0.1 in a background thread."""

    def __init__(self):
        self.recorder = Recorder()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.recorder = self.recorder
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def aside(self) -> dict[str, str]:
        return self.recorder.aside

    @property
    def replies(self) -> dict[str, str]:
        return self.recorder.replies

    @property
    def requests(self):
        with self.recorder.lock:
            return list(self.recorder.requests)
