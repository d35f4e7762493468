"""The optional engines of the ``scale`` extra (LanceDB for the vector store, Dask for batch
evaluation). Each is imported only where a setting or a flag asks for it, so the default install
never needs them and a missing one is a clear message rather than an ImportError.
"""
from __future__ import annotations

import importlib
from types import ModuleType

INSTALL_HINT = "install the scale extra: .venv/bin/pip install -e '.[scale]'"


def require(module: str, purpose: str, error: type[Exception] = ValueError) -> ModuleType:
    """``module`` imported, or ``error`` saying that ``purpose`` needs it and how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise error(f"{purpose} needs the {module.split('.')[0]} package, which cannot be imported ({exc}): "
                    f"{INSTALL_HINT}") from None
