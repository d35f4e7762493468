"""The Answerability Workbench pipeline: no Streamlit, usable from Python and the CLI.

    from core import Workbench, decide
    from core.kb import KnowledgeBase
    kb = KnowledgeBase.open("sample_kb/documents", core.settings.defaults())
    outcome = Workbench(kb).ask("Can I get the Winter Fuel Payment?")   # trace, decision, response
    decision = decide(outcome.trace, {"amb_max": 0.5})   # no model call

Names are imported lazily so that ``core.settings`` or ``core.types`` alone stay
cheap to import (no torch).
"""
from importlib import import_module

_EXPORTS = {"analyze": "core.pipeline", "make_query": "core.pipeline", "decide": "core.gate",
            "Workbench": "core.service"}
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'core' has no attribute {name!r}")
