"""The settings sidebar: one widget per entry of ``core.settings.SETTINGS``, in the declaration's
groups (``Setting.group``: the gate thresholds first), each group marked "re-gates only" or
"re-analyses" from the settings' stages.

Widgets are generated from the declaration (slider for numbers, toggle for switches, selectbox for
choices), carry the declared help text, and show ● in their label when they differ from the
default. Values live in ``st.session_state`` (one key per widget, kept across pages); reset and
preset loading run as callbacks, before the widgets are drawn, as Streamlit requires.
"""
from __future__ import annotations

from typing import Any, Mapping

import streamlit as st

from core import settings as settings_mod
from core.settings import GROUPS, SETTINGS, Setting

PREFIX = "aw_set_"
VALUES_KEY = "aw_values"  # the last values the sidebar produced, for pages that do not draw it
PRESET_KEY = "aw_preset_file"
DRAWN_BY_KEY = "aw_settings_drawn_by"  # the page whose sidebar drew the settings widgets last
PRESET_RESETS = "aw_preset_resets"  # how often Reset emptied the preset uploader (names its widget)
PRESET_ERROR_KEY = "aw_preset_error"
CHANGED = " ●"
GROUP_TITLES = {
    "thresholds": "Gate thresholds", "retrieval": "Retrieval and index", "evidence": "Evidence and claim",
    "conditions": "Conditions, graph and premises", "rules": "Gate rules", "answer": "Answer checks",
}
REGATE_MARK, REANALYSE_MARK = "⚡ re-gates only", "⟳ re-analyses"


def group_title(group: str) -> str:
    """A group's title with what a change in it costs, read from its settings' stages."""
    members = [s for s in SETTINGS if s.group == group]
    regates = all(s.regates_only for s in members)
    mark = REGATE_MARK if regates else REANALYSE_MARK
    if not regates and any(s.stage == "index" for s in members):
        mark += " (some re-index)"
    return f"{GROUP_TITLES.get(group, group.title())} · {mark}"


def widget_key(name: str) -> str:
    return PREFIX + name


def current_values() -> dict[str, Any]:
    """The settings in force: what the sidebar last produced, else the defaults."""
    return dict(st.session_state.get(VALUES_KEY) or settings_mod.defaults())


def differs(setting: Setting, value: Any) -> bool:
    if setting.kind in ("int", "float"):
        return abs(float(value) - float(setting.default)) > 1e-9
    return value != setting.default


def _typed(setting: Setting, value: Any) -> Any:
    return {"int": int, "float": float, "bool": bool}.get(setting.kind, str)(value)


def apply_values(values: Mapping[str, Any]) -> None:
    """Put ``values`` into every settings widget (call from a callback: before the widgets are drawn)."""
    for s in SETTINGS:
        st.session_state[widget_key(s.name)] = _typed(s, values[s.name])
    st.session_state[VALUES_KEY] = dict(values)


def _preset_key() -> str:
    """The preset uploader's key: a new one after each reset, which empties it (a loaded file's name no longer
    shows beside settings that are not its own)."""
    return f"{PRESET_KEY}_{st.session_state.get(PRESET_RESETS, 0)}"


def _reset() -> None:
    apply_values(settings_mod.defaults())
    st.session_state.pop(PRESET_ERROR_KEY, None)
    st.session_state[PRESET_RESETS] = st.session_state.get(PRESET_RESETS, 0) + 1


def _load_preset() -> None:
    upload = st.session_state.get(_preset_key())
    if upload is None:
        return
    try:
        values = settings_mod.parse_preset(upload.getvalue(), upload.name)
    except ValueError as exc:
        st.session_state[PRESET_ERROR_KEY] = str(exc) if upload.name in str(exc) else f"{upload.name}: {exc}"
        return
    apply_values(values)
    st.session_state.pop(PRESET_ERROR_KEY, None)


def _widget(setting: Setting, key: str, current: Any) -> Any:
    label = (setting.label or setting.name) + (CHANGED if differs(setting, current) else "")
    help_text = f"{setting.help}\n\nDefault: {setting.default} · setting `{setting.name}`"
    if setting.kind == "bool":
        return st.toggle(label, key=key, help=help_text, persist_state="session")
    if setting.kind == "choice":
        return st.selectbox(label, setting.choices, key=key, help=help_text, persist_state="session")
    if setting.kind == "text":
        return st.text_input(label, key=key, help=help_text, persist_state="session")
    cast = int if setting.kind == "int" else float
    return st.slider(label, cast(setting.low), cast(setting.high), step=cast(setting.step), key=key,
                     help=help_text, persist_state="session")


def render_settings(page: str) -> dict[str, Any]:
    """Draw every setting in the sidebar of ``page`` and return the values in force (checked by ``resolve``)."""
    stored = current_values()
    # Streamlit keeps a widget's state for the page that drew it: the same key's slider in another page's sidebar
    # started at its minimum (Inspect straight to Evaluate zeroed all). So a page drawing the sidebar after another
    # assigns every widget the values in force; on its own reruns it leaves them to the widgets, which a value
    # written back while the user moves one could undo.
    arrived = st.session_state.get(DRAWN_BY_KEY) != page
    st.session_state[DRAWN_BY_KEY] = page
    for s in SETTINGS:
        key = widget_key(s.name)
        if arrived or key not in st.session_state:
            st.session_state[key] = _typed(s, stored[s.name])
    state = st.session_state.to_dict()  # one snapshot: each session_state lookup scans every key
    values: dict[str, Any] = {}
    with st.sidebar:
        st.header("Settings", anchor=False)
        st.caption(f"{REGATE_MARK}: decided again at once, no analysis. {REANALYSE_MARK}: the stages after "
                   "the setting run again. ● marks a changed value; (?) says what a setting does.")
        for group in GROUPS:
            members = [s for s in SETTINGS if s.group == group]
            if not members:
                continue
            with st.expander(group_title(group), expanded=group == GROUPS[0]):
                for s in members:
                    values[s.name] = _widget(s, widget_key(s.name), state[widget_key(s.name)])
        values = settings_mod.resolve(values)
        st.session_state[VALUES_KEY] = values
        changed = [s for s in SETTINGS if differs(s, values[s.name])]  # named as their widgets are labelled
        st.caption(f"{len(changed)} setting{'' if len(changed) == 1 else 's'} changed from the defaults"
                   + (": " + ", ".join(f"“{s.label or s.name}”" for s in changed) if changed else "."))
        st.button("Reset to defaults", on_click=_reset, key="aw_reset", width="stretch")
        st.download_button("Save preset (JSON)", lambda: settings_mod.preset_json(values), file_name="preset.json",
                           mime="application/json", key="aw_preset_save", on_click="ignore", width="stretch")
        st.file_uploader("Load preset", type=["json"], key=_preset_key(), on_change=_load_preset,
                         help="A JSON file saved with 'Save preset' or core.settings.save_preset.")
        if st.session_state.get(PRESET_ERROR_KEY):
            st.error(f"Cannot load the preset: {st.session_state[PRESET_ERROR_KEY]}")
    return values

