"""JSON over HTTP to the inference servers a role can be pointed at (the generator's chat server,
the embedding server, the NLI scoring server), with the standard library only.

One helper so that every role words a server failure the same way: who was asked, and whether it
could not be reached, did not answer in time, answered an HTTP error or answered something else
than the protocol's reply. Nothing here is called unless a server URL was configured.
"""
from __future__ import annotations

import json
import os
import socket
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

API_KEY_ENV = "OPENAI_API_KEY"


class ServerError(RuntimeError):
    """A server did not give a usable reply; the message names the server and what went wrong."""


def check_url(url: str, what: str, example: str) -> str:
    """``url`` without a trailing slash; ValueError unless it is an http(s) URL with a host."""
    parsed = urllib.parse.urlparse(url or "")
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValueError(f"the {what} URL must look like {example}, not {url!r}")
    return url.rstrip("/")


def bad_reply(who: str, expected: str, got: Any) -> ServerError:
    """The error for a reply that is not what the protocol returns (an excerpt of it shown)."""
    text = got.decode("utf-8", "replace") if isinstance(got, bytes) else json.dumps(got, default=str)
    return ServerError(f"{who} did not return {expected} (got {text[:80]!r})")


def post_json(url: str, body: Any, *, who: str, expected: str, timeout: float,
              api_key_env: str = API_KEY_ENV) -> Any:
    """POST ``body`` as JSON and return the decoded JSON reply. ``who`` names the server in errors
    ("the embedding server http://…"), ``expected`` the reply ("embeddings"). The API key, if any,
    is read from ``api_key_env`` at call time so that it is never stored."""
    headers = {"Content-Type": "application/json"}
    key = os.environ.get(api_key_env, "")
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
    except urllib.error.HTTPError as exc:
        detail = exc.read()[:200].decode("utf-8", "replace").strip()
        raise ServerError(f"{who} answered HTTP {exc.code} {exc.reason}" + (f": {detail}" if detail else "")) from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, (TimeoutError, socket.timeout)):
            raise ServerError(f"{who} did not answer within {timeout:g} s") from None
        raise ServerError(f"{who} cannot be reached ({exc.reason}); is it running?") from None
    except (TimeoutError, socket.timeout):
        raise ServerError(f"{who} did not answer within {timeout:g} s") from None
    except OSError as exc:
        raise ServerError(f"{who} failed ({exc})") from None
    try:
        return json.loads(raw)
    except ValueError:
        raise bad_reply(who, expected, raw) from None
