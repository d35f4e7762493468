"""The knowledge graph (seed 002 §6–7) on small real texts with the real spaCy model and embedder."""
from __future__ import annotations

import json
import math

import pytest

from core import kg
from core.text import split_sentences
from core.types import Passage, from_dict, to_dict

DOCS = {
    "harlow_bridge": ("Harlow Bridge",
                      "The Harlow Bridge crosses the River Ost in the town of Harlow. The Harlow Bridge was "
                      "designed by Edith Marlowe. It was opened in 1958."),
    "edith_marlowe": ("Edith Marlowe",
                      "Edith Marlowe was born in Tessby. She studied engineering at the University of Leeds. "
                      "She founded Marlowe & Sons in London."),
    "winter_fuel": ("Winter Fuel Payment",
                    "The Winter Fuel Payment is a yearly payment from the Calvera Benefits Office.\n\n"
                    "You can get it if you meet all of the following:\n\n"
                    "* you are aged 66 or over\n* you have lived in Calvera for at least 3 years"),
    "lake_morrow": ("Lake Morrow", "Lake Morrow is the largest lake in Calvera. It is 40 metres deep."),
}


def passages() -> list[Passage]:
    return [Passage(f"{doc}#0", doc, title, text, 0, len(text), tuple(split_sentences(text)))
            for doc, (title, text) in DOCS.items()]


@pytest.fixture(scope="session")
def built():
    calls = []
    graph = kg.GraphBuilder().run(passages(), progress=lambda done, total, stage: calls.append((done, total, stage)))
    return graph, calls


@pytest.fixture(scope="session")
def graph(built):
    return built[0]


def edge(graph, source, target):
    return next((e for e in graph.edges if {e.source, e.target} == {source, target}), None)


# --- construction -------------------------------------------------------------------------

def test_known_triple_between_named_entities(graph):
    e = edge(graph, "harlow bridge", "edith marlowe")
    assert e is not None, [(x.source, x.relation, x.target) for x in graph.edges]
    assert (e.source, e.relation, e.target) == ("harlow bridge", "design_by", "edith marlowe")
    assert e.sentence == "The Harlow Bridge was designed by Edith Marlowe."
    assert e.passage_id == "harlow_bridge#0"
    assert e.conf == 0.7  # a verb–preposition–object chain
    assert e.sem >= 0.5 and e.weight == pytest.approx(min(0.95, 0.5 * e.sem + 0.5 * e.act), abs=1e-4)
    svo = edge(graph, "harlow bridge", "river ost")
    assert svo is not None and svo.relation == "cross" and svo.conf == 0.8


def test_copula_with_a_relational_noun_gives_a_chain(graph):
    e = edge(graph, "winter fuel payment", "calvera benefits office")
    assert e is not None and e.relation == "be_payment_from"


def test_pronoun_sentences_give_no_edges_and_no_pronoun_nodes(graph):
    pronoun_sentences = {"She studied engineering at the University of Leeds.", "She founded Marlowe & Sons in London.",
                         "It was opened in 1958.", "It is 40 metres deep."}
    assert not [e for e in graph.edges if e.sentence in pronoun_sentences]
    ids = {n.id for n in graph.nodes}
    assert not ids & kg.PRONOUNS
    assert "marlowe & sons" not in ids and "london" not in ids  # only in pronoun-subject sentences: pruned


def test_no_isolated_nodes_and_stats_add_up(graph):
    endpoints = {n for e in graph.edges for n in (e.source, e.target)}
    assert {n.id for n in graph.nodes} == endpoints
    s = graph.stats
    assert s.nodes == len(graph.nodes) and s.edges == len(graph.edges)
    assert s.candidate_triples >= s.unique_triples >= s.edges
    assert s.kept_ratio == pytest.approx(s.edges / s.unique_triples)
    assert s.nodes_before_pruning > s.nodes
    assert sum(s.categories.values()) == s.nodes
    assert set(s.categories) <= set(kg.CATEGORIES.values())


def test_progress_reports_every_stage_to_completion(built):
    _, calls = built
    stages = {stage for _, _, stage in calls}
    assert {"knowledge graph: parsing", "knowledge graph: validating triples",
            "knowledge graph: embedding nodes"} <= stages
    for stage in stages:
        done, total, _ = [c for c in calls if c[2] == stage][-1]
        assert done == total


def test_edge_threshold_drops_edges_and_then_their_nodes(graph):
    cut = sorted(e.sem for e in graph.edges)[0] + 1e-3  # drop the least grounded edge(s)
    strict = kg.GraphBuilder(edge_min=cut).run(passages())
    assert {(e.source, e.relation, e.target) for e in strict.edges} == \
        {(e.source, e.relation, e.target) for e in graph.edges if e.sem >= cut}
    assert len(strict.edges) < len(graph.edges)
    assert {n.id for n in strict.nodes} == {n for e in strict.edges for n in (e.source, e.target)}
    assert strict.stats.kept_ratio < graph.stats.kept_ratio


@pytest.mark.parametrize("label, ok", [("she", False), ("The", False), ("1921", False), ("£1,200", False),
                                       ("UK", False), ("east coast of", False), ("Edith Marlowe", True),
                                       ("14 May 1958", True)])
def test_validator(label, ok):
    assert kg.valid_entity(label) is ok


def test_normalise_strips_article_and_possessive():
    assert kg.normalise("the Harlow Bridge's") == "Harlow Bridge"
    assert kg.normalise(" The  Pale\nLanterns ") == "Pale Lanterns"


def test_save_and_load_round_trip(graph, tmp_path):
    graph.save(tmp_path)
    loaded = kg.KnowledgeGraph.load(tmp_path)
    assert loaded.nodes == graph.nodes and loaded.edges == graph.edges and loaded.stats == graph.stats
    assert (loaded.node_vectors == graph.node_vectors).all() and (loaded.edge_vectors == graph.edge_vectors).all()
    assert json.loads((tmp_path / "kg.json").read_text())["format"] == kg.FORMAT_VERSION
    question = "Who designed the Harlow Bridge?"
    assert kg.SubgraphQuery().run(loaded, question) == kg.SubgraphQuery().run(graph, question)


def test_text_without_entity_relations_gives_an_empty_graph_that_still_works(tmp_path):
    text = "You can apply online. It takes three weeks. She said it was fine."
    empty = kg.GraphBuilder().run([Passage("p#0", "p", "P", text, 0, len(text), tuple(split_sentences(text)))])
    assert empty.nodes == () and empty.edges == () and empty.stats.candidate_triples == 0
    empty.save(tmp_path)
    loaded = kg.KnowledgeGraph.load(tmp_path)
    sg = kg.SubgraphQuery().run(loaded, "How do I apply?", missing=("your age",))
    assert sg.nodes == () and sg.unanchored == ("your age",)


def test_load_explains_a_missing_or_damaged_graph(tmp_path):
    with pytest.raises(FileNotFoundError, match="re-index"):
        kg.KnowledgeGraph.load(tmp_path)
    (tmp_path / "kg.json").write_text("{not json")
    (tmp_path / "kg.npz").write_bytes(b"")
    with pytest.raises(ValueError, match="re-index"):
        kg.KnowledgeGraph.load(tmp_path)


# --- query time ---------------------------------------------------------------------------

def test_question_about_a_known_entity_gets_its_triples_and_a_path(graph):
    sg = kg.SubgraphQuery().run(graph, "Who designed the Harlow Bridge?")
    assert [m.node for m in sg.matched] == ["harlow bridge"] and sg.n_matched == 1
    assert ("harlow bridge", "design_by", "edith marlowe") in {(e.source, e.relation, e.target) for e in sg.edges}
    assert sg.complete_path and not sg.has_var
    assert sg.path[0] == "harlow bridge"
    # one matched entity: PathScore is its strongest incident edge
    assert sg.path_score == pytest.approx(max(e.weight for e in sg.edges if "harlow bridge" in (e.source, e.target)),
                                          abs=1e-4)
    assert {n.kind for n in sg.nodes} == {"entity"}


def test_path_score_is_the_product_of_weights_between_two_question_entities(graph):
    sg = kg.SubgraphQuery().run(graph, "How is Tessby linked to the Harlow Bridge?")
    assert {"tessby", "harlow bridge"} <= {m.node for m in sg.matched}
    assert set(sg.path) == {"harlow bridge", "edith marlowe", "tessby"}
    first, second = edge(graph, "harlow bridge", "edith marlowe"), edge(graph, "edith marlowe", "tessby")
    assert sg.path_score == pytest.approx(first.weight * second.weight, abs=1e-4)
    assert {first, second} <= set(sg.edges)  # the path's edges are shown even if less relevant
    strict = kg.SubgraphQuery(path_min=0.9).run(graph, "How is Tessby linked to the Harlow Bridge?")
    assert strict.path_score == sg.path_score and strict.complete_path is False


def test_off_topic_question_gives_an_empty_subgraph(graph):
    sg = kg.SubgraphQuery().run(graph, "What is the boiling point of ethanol?")
    assert sg.nodes == () and sg.edges == () and sg.n_matched == 0
    assert sg.path_score == 0.0 and not sg.complete_path and not sg.has_var


def test_missing_variable_attaches_to_the_nearest_anchor(graph):
    sg = kg.SubgraphQuery().run(graph, "Am I eligible for the Winter Fuel Payment?",
                                missing=("years of residence in Calvera", "favourite colour"),
                                anchor_passages=("winter_fuel#0",))
    requires = [e for e in sg.edges if e.relation == "requires"]
    assert len(requires) == 1 and requires[0].source == "calvera"  # not the office, not the payment
    var = next(n for n in sg.nodes if n.id == requires[0].target)
    assert var.kind == "var" and var.label == "years of residence in Calvera" and var.id.startswith("?var")
    assert requires[0].weight == 0.9
    assert sg.has_var and sg.unanchored == ("favourite colour",)
    assert "calvera" in {n.id for n in sg.nodes}


def test_missing_variable_without_any_anchor_stays_unanchored(graph):
    sg = kg.SubgraphQuery().run(graph, "What is the boiling point of ethanol?", missing=("which liquid",))
    assert not sg.has_var and sg.unanchored == ("which liquid",) and sg.nodes == ()


def test_subgraph_is_json_round_trippable(graph):
    sg = kg.SubgraphQuery().run(graph, "Am I eligible for the Winter Fuel Payment?",
                                missing=("years of residence in Calvera",), anchor_passages=("winter_fuel#0",))
    assert from_dict(kg.Subgraph, json.loads(json.dumps(to_dict(sg)))) == sg


def test_bad_query_input_is_refused_with_a_message(graph):
    with pytest.raises(ValueError, match="question is empty"):
        kg.SubgraphQuery().run(graph, "  ")
    with pytest.raises(ValueError, match="list of strings"):
        kg.SubgraphQuery().run(graph, "Who designed the Harlow Bridge?", missing="your age")


# --- decision reinforcement ---------------------------------------------------------------------

def test_reinforce_moves_the_edges_of_labelled_questions_in_a_new_layer(graph):
    before = edge(graph, "harlow bridge", "edith marlowe")
    up = kg.reinforce(graph, [{"question": "Who designed the Harlow Bridge?", "action": "ANSWER"}])
    after = edge(up, "harlow bridge", "edith marlowe")
    assert after.act == pytest.approx(min(1.0, before.act + 0.20))
    assert after.weight == pytest.approx(min(0.95, 0.5 * after.sem + 0.5 * after.act), abs=1e-4)
    assert edge(graph, "harlow bridge", "edith marlowe") == before  # the base graph is untouched
    assert up.stats.layer == "reinforced" and up.stats.reinforced_items == 1
    untouched = edge(up, "lake morrow", "calvera")
    assert untouched == edge(graph, "lake morrow", "calvera")

    down = kg.reinforce(graph, [{"question": "Who designed the Harlow Bridge?", "action": "ABSTAIN"}])
    assert edge(down, "harlow bridge", "edith marlowe").act == pytest.approx(before.act - 0.10)
    assert edge(down, "harlow bridge", "edith marlowe").weight < before.weight


def test_reinforce_refuses_unknown_actions(graph):
    with pytest.raises(ValueError, match="unknown action"):
        kg.reinforce(graph, [{"question": "Who designed the Harlow Bridge?", "action": "MAYBE"}])


def test_best_path_prefers_the_strongest_product():
    def e(s, t, w):
        return kg.KgEdge(s, t, "r", w, w, w, "", "")
    ab, bc, ac = e("a", "b", 0.9), e("b", "c", 0.9), e("a", "c", 0.5)
    assert kg._best_path(["a", "c"], [ab, bc, ac]) == (["a", "b", "c"], [ab, bc], pytest.approx(0.81))
    # no path between the matched entities: the best fallback edge touching one of them
    assert kg._best_path(["a", "d"], [ab], [ab, e("x", "y", 0.95)]) == (["a", "b"], [ab], 0.9)
    assert kg._best_path(["x"], []) == ([], [], 0.0)
    assert math.isclose(kg.edge_weight(1.2, 1.0, 0.5, 0.95), 0.95)
