"""A local stand-in for an OpenAI-compatible chat server, for tests.

``FakeOpenAIServer(mode=...)`` listens on 127.0.0.1 (a free port) in a thread and answers
``POST /v1/chat/completions``. Modes (changeable between requests via ``.mode``):
``ok`` (a proper completion whose content is ``reply`` or ``reply(messages)``), ``error``
(HTTP 500), ``garbage`` (a 200 whose body is not JSON), ``empty`` (JSON without choices)
and ``slow`` (waits ``delay`` seconds, then answers like ``ok``). Every request body and
its Authorization header are recorded in ``.requests``.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

MODES = ("ok", "error", "garbage", "empty", "slow")


class FakeOpenAIServer:
    def __init__(self, mode: str = "ok", reply: str | Callable[[list[dict]], str] = "Fake reply.",
                 delay: float = 2.0):
        self.mode = mode
        self.reply = reply
        self.delay = delay
        self.requests: list[dict] = []
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> "FakeOpenAIServer":
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append({"path": self.path, "body": body,
                                      "authorization": self.headers.get("Authorization", "")})
                if self.path != "/v1/chat/completions":
                    return self._send(404, b'{"error": "not found"}')
                if fake.mode == "error":
                    return self._send(500, b'{"error": {"message": "model crashed"}}')
                if fake.mode == "garbage":
                    return self._send(200, b"<html>definitely not json")
                if fake.mode == "empty":
                    return self._send(200, b'{"object": "chat.completion", "choices": []}')
                if fake.mode == "slow":
                    time.sleep(fake.delay)
                text = fake.reply(body["messages"]) if callable(fake.reply) else fake.reply
                payload = {"id": "fake-1", "object": "chat.completion", "model": body.get("model"),
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": text}}]}
                self._send(200, json.dumps(payload).encode())

            def _send(self, code: int, data: bytes):
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out first
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
