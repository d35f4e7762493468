"""A local stand-in for the inference servers a role can be pointed at, for tests.

``FakeOpenAIServer(mode=...)`` listens on 127.0.0.1 (a free port) in a thread and answers
``POST /v1/chat/completions`` (the generator), ``POST /v1/embeddings`` (OpenAI's embeddings, from
``embed(texts) -> vectors``) and ``POST /predict`` (Text Embeddings Inference's pair classification,
at the root ``.root``, from ``predict(pairs) -> [{label: logit}]``: like TEI it returns every label
of each pair sorted by score, softmax probabilities unless the request asks for ``raw_scores``).
Modes (changeable between requests via ``.mode``): ``ok`` (a proper reply; the completion's content
is ``reply`` or ``reply(messages)``), ``error`` (HTTP 500), ``garbage`` (a 200 whose body is not
JSON), ``empty`` (JSON without the results) and ``slow`` (waits ``delay`` seconds, then answers
like ``ok``). Every request's path, body and Authorization header are recorded in ``.requests``.
"""
from __future__ import annotations

import json
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Sequence

MODES = ("ok", "error", "garbage", "empty", "slow")


class FakeOpenAIServer:
    def __init__(self, mode: str = "ok", reply: str | Callable[[list[dict]], str] = "Fake reply.",
                 delay: float = 2.0, embed: Callable[[list[str]], Sequence[Sequence[float]]] | None = None,
                 predict: Callable[[list[tuple[str, str]]], list[dict[str, float]]] | None = None):
        self.mode = mode
        self.reply = reply
        self.delay = delay
        self.embed = embed
        self.predict = predict
        self.requests: list[dict] = []
        self._server: ThreadingHTTPServer | None = None

    @property
    def root(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def url(self) -> str:
        return f"{self.root}/v1"

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
                answer = {"/v1/chat/completions": self._chat, "/v1/embeddings": self._embeddings,
                          "/predict": self._predict}.get(self.path)
                if answer is None:
                    return self._send(404, b'{"error": "not found"}')
                if fake.mode == "error":
                    return self._send(500, b'{"error": {"message": "model crashed"}}')
                if fake.mode == "garbage":
                    return self._send(200, b"<html>definitely not json")
                if fake.mode == "slow":
                    time.sleep(fake.delay)
                self._send(200, json.dumps(answer(body, empty=fake.mode == "empty")).encode())

            def _chat(self, body: dict, empty: bool):
                text = fake.reply(body["messages"]) if callable(fake.reply) else fake.reply
                choices = [] if empty else [{"index": 0, "finish_reason": "stop",
                                             "message": {"role": "assistant", "content": text}}]
                return {"id": "fake-1", "object": "chat.completion", "model": body.get("model"), "choices": choices}

            def _embeddings(self, body: dict, empty: bool):
                vectors = [] if empty else fake.embed(body["input"])
                return {"object": "list", "model": body.get("model"),
                        "data": [{"object": "embedding", "index": i, "embedding": v.tolist() if hasattr(v, "tolist") else list(v)}
                                 for i, v in enumerate(vectors)]}

            def _predict(self, body: dict, empty: bool):
                if empty:
                    return []
                out = []
                for logits in fake.predict([tuple(pair) for pair in body["inputs"]]):
                    scores = dict(logits)
                    if not body.get("raw_scores"):
                        total = sum(math.exp(v) for v in scores.values())
                        scores = {label: math.exp(v) / total for label, v in scores.items()}
                    out.append([{"label": label, "score": score}
                                for label, score in sorted(scores.items(), key=lambda kv: -kv[1])])
                return out

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
