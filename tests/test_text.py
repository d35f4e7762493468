"""The shared text helpers (core/text.py): one copy each of what several stages need."""
from __future__ import annotations

import pytest

from core.text import LRU, jsonl_records, split_sentences, stable_hash, strip_list_marker, without_markup


def test_lru_cache_is_bounded_and_keeps_what_was_used_last():
    cache = LRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now the most recent
    cache.put("c", 3)
    assert len(cache) == 2 and "b" not in cache and cache.get("a") == 1 and cache.get("c") == 3
    computed = []
    assert cache.get_or("d", lambda: computed.append(1) or 4) == (4, False)
    assert cache.get_or("d", lambda: computed.append(1) or 5) == (4, True) and computed == [1]
    with pytest.raises(ValueError):
        LRU(0)


def test_stable_hash_is_order_free_for_keys_and_distinguishes_parts():
    assert stable_hash({"a": 1, "b": [2, 3]}) == stable_hash({"b": [2, 3], "a": 1})
    assert stable_hash("a", "b") != stable_hash("ab") and len(stable_hash("x", length=12)) == 12


def test_jsonl_records_number_lines_and_report_bad_ones():
    text = '{"id": 1}\n\nnot json\n{"text": "a\u2028b"}\n'
    records = list(jsonl_records(text))
    assert [(n, obj) for n, obj, error in records if not error] == [(1, {"id": 1}), (4, {"text": "a\u2028b"})]
    assert [(n, error.startswith("not valid JSON")) for n, obj, error in records if error] == [(3, True)]


@pytest.mark.parametrize("text, stripped", [("* are aged 66 or over", "are aged 66 or over"),
                                            ("2. have lived here", "have lived here"),
                                            ("(a) earn less", "earn less"), ("(iv) be resident", "be resident"),
                                            ("— a dash item", "a dash item"), ("Carn Odhar is 912 m.", "Carn Odhar is 912 m.")])
def test_one_list_marker_pattern(text, stripped):
    assert strip_list_marker(text) == stripped


def test_the_answer_check_and_the_index_split_sentences_alike():
    """"e.g." and "Mr." do not end a sentence for the grounding check either (they did with the old regex)."""
    text = "Claims go to Mr. Jones, e.g. by post. The fee is £88.50 online."
    assert [s.text for s in split_sentences(text)] == ["Claims go to Mr. Jones, e.g. by post.",
                                                       "The fee is £88.50 online."]


def test_typed_text_ends_a_sentence_before_a_lowercase_word():
    """People skip capitals ("I am 71. can i get a bus pass?"; the train KB's "… the apprentice rate. is that
    right?"); a document's "approx. five" or "etc. and" goes on, and so does a typed abbreviation."""
    typed = "my boss pays me the apprentice rate. is that right? i moved to the U.S. military base etc. and stayed"
    assert [s.text for s in split_sentences(typed, typed=True)] == [
        "my boss pays me the apprentice rate.", "is that right?",
        "i moved to the U.S. military base etc. and stayed"]
    assert [s.text for s in split_sentences("I am 71. can i get a bus pass?", typed=True)] == [
        "I am 71.", "can i get a bus pass?"]
    document = "Payments take approx. five days. the office, i.e. the council, decides."
    assert [s.text for s in split_sentences(document)] == [document]


@pytest.mark.parametrize("typed, read", [
    ("im 62 and ive lived here", "I'm 62 and I've lived here"),
    ("Whats the fee? whens it due", "What's the fee? when's it due"),
    ("I was ill and well, its were", "I was ill and well, its were"),  # words of their own stay
])
def test_a_pronoun_contraction_typed_without_its_apostrophe_gets_one(typed, read):
    """A smoke check's casual questions ("im 62, can i get …") were read with "im" as a word: the age never
    reached the fact readers and "whens" parsed as "when s"."""
    from core.text import spelled_contractions
    assert spelled_contractions(typed) == read


@pytest.mark.parametrize("typed, read", [
    ("I havent been offered a place on this course.", "I haven't been offered a place on this course."),
    ("i dont have kids and my wife isnt working", "i don't have kids and my wife isn't working"),
    ("We cant, and Wont", "We can't, and Won't"),
    ("I don\u2019t", "I don't"),
    ("I want the constant attendance allowance", "I want the constant attendance allowance"),  # no contraction
])
def test_a_negative_contraction_typed_without_its_apostrophe_gets_one(typed, read):
    """ShARC train scenarios (training data) write "havent", "dont", "wasnt": the negation cues are written
    with the apostrophe."""
    from core.text import with_apostrophes
    assert with_apostrophes(typed) == read


def test_straight_quotes_keeps_length_and_straightens_apostrophes():
    from core.text import straight_quotes
    text = "You can\u2019t claim \u2018Carer\u2019s Allowance\u2019"
    assert straight_quotes(text) == "You can't claim 'Carer's Allowance'" and len(straight_quotes(text)) == len(text)


@pytest.mark.parametrize("line, is_title", [
    # plain-text contracts' section names, signature blocks and exhibit labels
    ("Governing Law/Disputes", True), ("CONDUCT POLICY", True), ("Date: 7/25/01", True), ("(Print Name)", True),
    ("EXHIBIT 10.2", True), ("Notices and Consents", True), ("- MISCELLANEOUS", True),
    # what says something: a sentence, a label with a value, an item of a rule
    ("The Recipient shall return all documents.", False), ("Term: 5 years", False),
    ("You must be 16 or over", False), ("Koji Kondo composed the score", False), ("", False),
])
def test_a_title_line_names_a_section_and_says_nothing(line, is_title):
    from core.text import title_line
    assert title_line(line) is is_title


@pytest.mark.parametrize("pasted, read", [
    ("<p>When did the <b>Harlow Bridge</b> open?</p>", " When did the Harlow Bridge open? "),
    ("<b>Harlow</b>'s bridge", "Harlow's bridge"),
    ("one<br/>two", "one two"),
    ("<SCRIPT type='x'>alert('<p>')</SCRIPT>Can I?", " Can I?"),
    ("Tom &amp; Jerry &#8217; &eacute;", "Tom & Jerry \u2019 \u00e9"),
    ("income < £12,000 and age > 66", "income < £12,000 and age > 66"),  # no tag HTML defines
    ("R&D and AT&T &amp", "R&D and AT&T &amp"),  # no entity without its semicolon
    ("plain text", "plain text"),
])
def test_without_markup_reads_pasted_html_as_its_text(pasted, read):
    assert without_markup(pasted) == read


BRIDGE_PAGE = ("# Harlow Bridge\n\nThe Harlow Bridge is a road bridge over the River Ost in Harlow, Calvera. "
               "The bridge was designed by the engineer Edith Marlowe.")


@pytest.mark.parametrize("typed, read", [
    ("who designed the harlow bridge?", "who designed the Harlow Bridge?"),  # a run, though "bridge" is a word too
    ("where does the river ost flow", "where does the River Ost flow"),
    ("is calvera in harlow?", "is Calvera in Harlow?"),  # words the page writes only as names
    ("when did the bridge open?", "when did the bridge open?"),  # a common word stays
    ("Who designed the harlow bridge?", "Who designed the Harlow Bridge?"),  # a capital opening the question only
    ("Who designed the Harlow bridge?", "Who designed the Harlow bridge?"),  # capitals inside: left as typed
])
def test_a_question_typed_without_capitals_names_what_its_texts_write_as_names(typed, read):
    from core.text import with_names_capitalised
    assert with_names_capitalised(typed, BRIDGE_PAGE) == read
