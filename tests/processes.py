"""Helpers for tests that start a real server process (the app under Chromium, an inference server)."""
from __future__ import annotations

import socket
import subprocess


def free_port() -> int:
    """A local TCP port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(proc: subprocess.Popen, timeout: float = 20) -> None:
    """Terminate a server process, killing it if it does not stop within ``timeout`` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
