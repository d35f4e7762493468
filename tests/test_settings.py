"""The single declaration of settings: checking, CLI parsing and presets."""
import pytest

from core import settings


def test_defaults_lie_in_their_ranges():
    for s in settings.SETTINGS:
        assert s.coerce(s.default) == s.default, s.name
        assert s.stage in settings.STAGES and s.help


def test_parse_assignments_checks_names_and_values():
    assert settings.parse_assignments(["top_k=8", "amb_max=0.5", "rule_ambiguity=off"]) == {
        "top_k": 8, "amb_max": 0.5, "rule_ambiguity": False}
    with pytest.raises(ValueError, match="unknown setting"):
        settings.parse_assignments(["nope=1"])
    with pytest.raises(ValueError, match=r"must lie in \[0.0, 1.0\]"):
        settings.parse_assignments(["amb_max=3"])
    with pytest.raises(ValueError, match="whole number"):
        settings.parse_assignments(["top_k=2.5"])
    with pytest.raises(ValueError, match="name=value"):
        settings.parse_assignments(["top_k"])


def test_preset_round_trip_and_bad_file(tmp_path):
    values = settings.resolve({"amb_max": 0.6, "top_k": 7})
    path = tmp_path / "p.json"
    settings.save_preset(values, path)
    assert settings.load_preset(path) == values
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="cannot read preset"):
        settings.load_preset(bad)


def test_stage_keys_separate_gate_from_model_stages():
    values = settings.defaults()
    assert "amb_max" in settings.for_stage(values, "gate")
    assert "amb_max" not in settings.for_stage(values, "retrieval")
    assert "top_k" in settings.for_stage(values, "retrieval")
