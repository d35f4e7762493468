"""Which folders the web UI may read and write: the project's ``kbs/`` and ``sample_kb/`` (and
``.cache/eval/``, where the Evaluate page keeps the knowledge bases it makes of labelled items), plus
the roots the person starting the server allows in ``AW_ALLOWED_ROOTS`` (paths separated by ``:``).

A browser user types paths into the server's machine; without a fence they could list any folder,
write an index into it, or read any file as a labelled set. The CLI is not fenced: whoever runs it
already has the machine.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence

ENV = "AW_ALLOWED_ROOTS"
TEXT_SUFFIXES = (".txt", ".md", ".jsonl", ".json")
PROJECT = Path(__file__).resolve().parent.parent


class PathNotAllowed(ValueError):
    """A path outside the allowed roots; the message says how to allow it."""


def allowed_roots(project: Path = PROJECT, environ: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """The project's kbs/, sample_kb/ and .cache/eval/ folders, then every root named in AW_ALLOWED_ROOTS."""
    env = (os.environ if environ is None else environ).get(ENV, "")
    extra = [Path(p).expanduser() for p in env.split(os.pathsep) if p.strip()]
    own = [project / "kbs", project / "sample_kb", project / ".cache" / "eval"]
    return tuple(dict.fromkeys(p.resolve() for p in [*own, *extra]))


def confine(path: str | Path, roots: Sequence[Path] | None = None) -> Path:
    """``path`` resolved (links followed, so a link cannot lead out) if it lies inside a root."""
    roots = allowed_roots() if roots is None else roots
    resolved = Path(path).expanduser().resolve()
    if any(resolved == r or resolved.is_relative_to(r) for r in roots):
        return resolved
    shown = ", ".join(_short(r) for r in roots)
    raise PathNotAllowed(f"{path} is outside the folders this server may use ({shown}). To allow another "
                         f"folder, start the server with {ENV}=/that/folder (several separated by ':').")


def _short(path: Path) -> str:
    return str(path.relative_to(PROJECT)) if path.is_relative_to(PROJECT) else str(path)


def binary_reason(data: bytes) -> str:
    """Why ``data`` is not text a text file should hold ("" when it reads as UTF-8 text): a binary
    file renamed .txt would otherwise be indexed as garbage."""
    sample = data[:65536]
    if b"\x00" in sample:
        return "it contains NUL bytes: a binary file, not text"
    try:
        text = sample.decode("utf-8")
    except UnicodeDecodeError:
        text = sample.decode("latin-1")  # legacy 8-bit text is still text; binary shows in control characters
    control = sum(1 for ch in text if ord(ch) < 32 and ch not in "\n\r\t\f")
    if text and control / len(text) > 0.01:
        return f"{control} control characters in its first {len(text)}: a binary file, not text"
    return ""
