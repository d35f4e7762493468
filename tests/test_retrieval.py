"""Hybrid retrieval (core/retrieval.py): fusion arithmetic on a synthetic KB, and ranking with the
real embedder on a small KB of real documents on distinct topics."""
from __future__ import annotations

import shutil
import zlib

import numpy as np
import pytest

from core import models
from core.kb import KnowledgeBase
from core.retrieval import Retriever, acronym_expansions

DOCS = {
    "benefits/carers_allowance.md": """# Carer's Allowance

You could get £81.90 a week if you care for someone at least 35 hours a week and they get certain benefits.
You do not have to be related to, or live with, the person you care for.

## Eligibility

- you are 16 or over
- you spend at least 35 hours a week caring for someone
- your earnings are £196 or less a week after tax
""",
    "travel/passport_renewal.md": """# Renew a passport

You can renew your passport online, by post or at a passport office. It usually takes 3 weeks to get a
new passport, longer in summer. The fee is £88.50 if you apply online. Do not book international
travel until the new passport has arrived.
""",
    "waste_collection.txt": """Household waste is collected every other week on your collection day.
Put your wheelie bin at the kerb by 7am. Recycling boxes are emptied on the same day. Garden waste is
collected from March to November if you pay the annual subscription of £52.
""",
    "animals/dog_microchipping.md": """# Dog microchipping

Every dog must be microchipped and registered on a database by the time it is 8 weeks old. A vet
implants the chip under the skin in a few seconds. Owners whose dog is not chipped can be fined up to £500.
""",
    "libraries.md": """# Library membership

Joining the library is free for everyone who lives, works or studies in the borough. Members can borrow
up to 12 books at a time for three weeks and renew them online. E-books and audiobooks can be borrowed
through the library app.
""",
    "council_tax_discount.md": """# Single person discount

If you are the only adult living in your home you get 25% off your council tax bill. Tell the council
within 21 days if someone aged 18 or over moves in, because the discount then stops.
""",
}

PARAPHRASES = [
    ("I look after my disabled mother for 40 hours every week. Is there money I can claim for that?",
     "benefits/carers_allowance"),
    ("How long before I receive a replacement travel document once I send off my old one?",
     "travel/passport_renewal"),
    ("When do the dustmen come and empty the rubbish?", "waste_collection"),
    ("My new puppy needs an identification implant, by what age is that required?",
     "animals/dog_microchipping"),
    ("Does it cost anything to start borrowing novels from the public lending service?", "libraries"),
    ("I live on my own. Can I get a reduction on what I pay the local authority for my home?",
     "council_tax_discount"),
]


@pytest.fixture(scope="session")
def real_kb(tmp_path_factory):
    """The six documents above, indexed with the real embedder (loaded once per test session)."""
    folder = tmp_path_factory.mktemp("real") / "kb"
    for rel, text in DOCS.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return KnowledgeBase.build(folder, {"chunk_chars": 400, "chunk_overlap": 1})


def _check_scores(kb, results, alpha, query_vector, query_text):
    """Ranks, score arithmetic and the dense score of each result against the stored embeddings."""
    assert [r.rank for r in results] == list(range(1, len(results) + 1))
    fused = [r.fused for r in results]
    assert fused == sorted(fused, reverse=True)
    bm25_all = kb.bm25_scores(query_text)
    for r in results:
        row = kb.passages.index(r.passage)
        assert r.dense == pytest.approx(float(kb.embeddings[row] @ query_vector), abs=1e-5)
        assert r.bm25 == pytest.approx(float(bm25_all[row]), rel=1e-5)
        assert 0.0 <= r.bm25_norm <= 1.0
        assert r.fused == pytest.approx(alpha * r.dense + (1 - alpha) * r.bm25_norm, abs=1e-6)


# --- the real embedder -------------------------------------------------------------------

@pytest.mark.parametrize("question,doc_id", PARAPHRASES)
def test_paraphrased_questions_find_the_right_document(real_kb, question, doc_id):
    results = Retriever(top_k=3, fusion_alpha=0.6).run(real_kb, question)
    assert results[0].passage.doc_id == doc_id, [(r.passage.id, round(r.fused, 3)) for r in results]
    assert results[0].dense > 0.3


def test_dense_alone_ranks_paraphrases_first_too(real_kb):
    """The embedder, not BM25 luck, carries the paraphrases: α = 1 still finds every document."""
    hits = [Retriever(top_k=1, fusion_alpha=1.0).run(real_kb, q)[0].passage.doc_id for q, _ in PARAPHRASES]
    assert hits == [doc_id for _, doc_id in PARAPHRASES]


def test_scores_are_consistent_with_the_real_embedder(real_kb):
    question = "How much is the passport fee when applying online?"
    vector = models.embed([question])[0]
    for alpha in (0.0, 0.6, 1.0):
        results = Retriever(top_k=5, fusion_alpha=alpha).run(real_kb, question)
        _check_scores(real_kb, results, alpha, vector, question)
    best_bm25 = Retriever(top_k=5, fusion_alpha=0.0).run(real_kb, question)[0]
    assert best_bm25.bm25_norm == 1.0 and best_bm25.bm25 == pytest.approx(real_kb.bm25_scores(question).max())
    assert best_bm25.passage.doc_id == "travel/passport_renewal"
    dense_first = Retriever(top_k=5, fusion_alpha=1.0).run(real_kb, question)
    rows, _ = real_kb.dense_search(vector, 5)
    assert [r.passage for r in dense_first] == [real_kb.passages[i] for i in rows]


class NoEmbedding(models.Models):
    def embed(self, texts, batch_size: int = 64):
        pytest.fail("embed() called despite query_vector")


def test_query_vector_is_used_instead_of_embedding(real_kb):
    question = "Is joining the library free?"
    vector = models.embed([question])[0]
    with models.using(NoEmbedding()):
        results = Retriever(top_k=2, fusion_alpha=0.6).run(real_kb, question, query_vector=vector)
    assert results[0].passage.doc_id == "libraries"


def test_hnsw_index_gives_the_same_ranking(real_kb, tmp_path):
    folder = tmp_path / "kb"
    shutil.copytree(real_kb.folder, folder)
    hnsw = KnowledgeBase.build(folder, {"chunk_chars": 400, "chunk_overlap": 1, "index_type": "hnsw"})
    assert hnsw.stats["embedded_passages"] == 0  # only the FAISS index changed
    for question, _ in PARAPHRASES:
        vector = models.embed([question])[0]
        flat = Retriever(top_k=3, fusion_alpha=0.6).run(real_kb, question, vector)
        approx = Retriever(top_k=3, fusion_alpha=0.6).run(hnsw, question, vector)
        assert [r.passage.id for r in flat] == [r.passage.id for r in approx]


# --- fusion logic on a synthetic KB --------------------------------------------------------

def _random_unit(text: str, dim: int = 16) -> np.ndarray:
    v = np.random.default_rng(zlib.crc32(text.encode())).normal(size=dim).astype("float32")
    return v / np.linalg.norm(v)


class RandomEmbeddings(models.Models):
    """A random unit vector per text (seeded by the text): retrieval logic without a model."""
    def embed(self, texts, batch_size: int = 64):
        return np.stack([_random_unit(t) for t in texts])


@pytest.fixture
def random_embeddings():
    with models.using(RandomEmbeddings()) as in_use:
        yield in_use


@pytest.fixture
def synthetic_kb(tmp_path, random_embeddings):
    """60 one-passage documents with random embeddings; document 42 alone mentions 'zeppelin'."""
    for n in range(60):
        extra = " Zeppelin flights need a permit." if n == 42 else ""
        (tmp_path / f"doc{n:02d}.md").write_text(f"# Topic {n}\n\nGeneral council information number {n}.{extra}\n")
    return KnowledgeBase.build(tmp_path)


def test_bm25_only_candidates_get_a_dense_score(synthetic_kb):
    kb = synthetic_kb
    target = next(i for i, p in enumerate(kb.passages) if p.doc_id == "doc42")
    vector = kb.embeddings[7] - 3 * kb.embeddings[target]  # points away from doc42
    vector /= np.linalg.norm(vector)
    dense_rows, _ = kb.dense_search(vector, 20)
    assert target not in dense_rows  # only BM25 nominates it
    results = Retriever(top_k=5, fusion_alpha=0.2).run(kb, "zeppelin permit", query_vector=vector)
    _check_scores(kb, results, 0.2, vector, "zeppelin permit")
    first = results[0]
    assert first.passage.doc_id == "doc42" and first.bm25_norm == 1.0 and first.bm25 > 0
    assert first.dense == pytest.approx(float(kb.embeddings[target] @ vector), abs=1e-6) and first.dense < -0.5
    assert [r.passage for r in results[1:]] == [kb.passages[i] for i in dense_rows[:4]]


def test_alpha_extremes_rank_by_one_source(synthetic_kb):
    kb = synthetic_kb
    vector = kb.embeddings[3]
    dense_only = Retriever(top_k=4, fusion_alpha=1.0).run(kb, "zeppelin", query_vector=vector)
    assert dense_only[0].passage.doc_id == "doc03" and dense_only[0].fused == pytest.approx(1.0, abs=1e-5)
    bm25_only = Retriever(top_k=4, fusion_alpha=0.0).run(kb, "zeppelin", query_vector=vector)
    assert bm25_only[0].passage.doc_id == "doc42" and bm25_only[0].fused == 1.0
    assert all(r.bm25_norm == 0.0 for r in bm25_only[1:])


def test_unknown_query_words_give_zero_bm25(synthetic_kb):
    kb = synthetic_kb
    results = Retriever(top_k=3, fusion_alpha=0.6).run(kb, "xylophone quartet", query_vector=kb.embeddings[5])
    assert all(r.bm25 == 0.0 and r.bm25_norm == 0.0 for r in results)
    assert results[0].passage.doc_id == "doc05"


def test_top_k_larger_than_the_kb_returns_every_passage(tmp_path, random_embeddings):
    (tmp_path / "a.md").write_text("# A\n\nOne short passage.\n")
    (tmp_path / "b.md").write_text("# B\n\nAnother short passage.\n")
    kb = KnowledgeBase.build(tmp_path)
    results = Retriever(top_k=20, fusion_alpha=0.6).run(kb, "passage", query_vector=kb.embeddings[0])
    assert sorted(r.passage.id for r in results) == ["a#0", "b#0"]


def test_bad_input_raises_clear_errors(synthetic_kb):
    retriever = Retriever(top_k=3, fusion_alpha=0.6)
    for empty in ("", "   \n"):
        with pytest.raises(ValueError, match="the query is empty"):
            retriever.run(synthetic_kb, empty)
    with pytest.raises(ValueError, match="re-index it with the current embedder"):
        retriever.run(synthetic_kb, "permit", query_vector=np.ones(384, dtype="float32"))
    with pytest.raises(ValueError, match="top_k"):
        Retriever(top_k=0, fusion_alpha=0.5)
    with pytest.raises(ValueError, match="fusion_alpha"):
        Retriever(top_k=3, fusion_alpha=1.5)


NATIONAL_INSURANCE = {
    "national_insurance.md": """# National Insurance

You pay National Insurance contributions to qualify for certain benefits and the State Pension.

You pay Class 1 contributions if you're an employee earning more than £242 a week. Your employer deducts them from your wages.

You pay Class 2 and Class 4 contributions if you're self-employed and make a profit of £12,570 or more a year.
""",
    "national_insurance_abroad.md": """# National Insurance if you go abroad

If your employer sends you to work in another country for up to 2 years, you may be able to keep paying National Insurance in the UK.

You might also be able to pay voluntary contributions while you live and work abroad, to protect your State Pension.
""",
    "council_tax.md": """# Council Tax

If you are the only adult living in your home you get 25% off your council tax bill.
""",
}


@pytest.fixture(scope="module")
def guides_kb(tmp_path_factory):
    from tests.conftest import build_small_kb
    return build_small_kb(tmp_path_factory.mktemp("guides") / "kb", NATIONAL_INSURANCE)


def test_the_scenario_picks_the_document_and_the_question_ranks_its_passages(guides_kb):
    question = "Do I still have to pay National Insurance?"
    scenario = "My employer is sending me to work in our Berlin office for two years."
    alone = Retriever(top_k=5, fusion_alpha=0.6).run(guides_kb, question, context=scenario)  # weight 0
    assert alone[0].passage.doc_id == "national_insurance"  # the question alone: the general guide
    assert alone == Retriever(top_k=5, fusion_alpha=0.6, scenario_weight=2.0).run(guides_kb, question)
    picked = Retriever(top_k=5, fusion_alpha=0.6, scenario_weight=2.0).run(guides_kb, question, context=scenario)
    assert picked[0].passage.doc_id == "national_insurance_abroad" and picked[0].scenario_penalty == 0.0
    assert all(p.scenario_penalty > 0 for p in picked if p.passage.doc_id != "national_insurance_abroad")
    vector = models.embed([question])[0]
    bm25_all = guides_kb.bm25_scores(question)
    for p in picked:  # every score is the question's; only the penalty comes from the scenario
        row = guides_kb.passages.index(p.passage)
        assert p.dense == pytest.approx(float(guides_kb.embeddings[row] @ vector), abs=1e-5)
        assert p.bm25 == pytest.approx(float(bm25_all[row]), rel=1e-5)
        assert p.fused == pytest.approx(0.6 * p.dense + 0.4 * p.bm25_norm, abs=1e-5)
        assert p.score == p.fused - p.scenario_penalty
    assert [p.score for p in picked] == sorted((p.score for p in picked), reverse=True)
    said = models.embed([f"{question} {scenario}"])[0]
    for p in picked:  # and how well it matches all the user said, for the topic signal
        row = guides_kb.passages.index(p.passage)
        assert p.dense_with_scenario == pytest.approx(float(guides_kb.embeddings[row] @ said), abs=1e-5)
    assert all(p.dense_with_scenario is None for p in alone)
    assert picked[0].fused < max(p.fused for p in picked)  # ranked first by the scenario, not by its score
    # a scenario that says nothing to tell the guides apart leaves the question's choice
    employee = Retriever(top_k=5, fusion_alpha=0.6, scenario_weight=2.0).run(
        guides_kb, "Will I pay Class 1 contributions?", context="I'm an employee and earn £300 a week.")
    assert employee[0].passage.doc_id == "national_insurance"
    with pytest.raises(ValueError, match="scenario_weight"):
        Retriever(top_k=5, fusion_alpha=0.6, scenario_weight=-1.0)


# --- abbreviations ---------------------------------------------------------------------------------

def test_an_abbreviation_is_spelled_out_by_a_title_that_spells_it_word_by_word():
    titles = ["Mutual Non-Disclosure Agreement", "Statutory Sick Pay", "Harlow Bridge"]
    assert acronym_expansions("How long does the Brightline mutual NDA run for?", titles) == ("non disclosure agreement",)
    assert acronym_expansions("Can I get SSP from two employers?", titles) == ("statutory sick pay",)
    assert acronym_expansions("Who is the CEO of Apple?", titles) == ()
    assert acronym_expansions("Can I get it if I am 66?", titles) == ()  # "I" abbreviates nothing


def test_a_lower_case_abbreviation_counts_only_where_the_knowledge_base_never_uses_the_word():
    """People type "nda" and "ssp"; "pay" or "can" are words the texts use, whatever a title spells."""
    titles = ["Mutual Non-Disclosure Agreement", "Statutory Sick Pay", "Pay As You Earn"]
    used = {"how", "long", "does", "the", "run", "for", "can", "get", "from", "two", "employers", "pay"}
    assert acronym_expansions("how long does the nda run for", titles, used.__contains__) == ("non disclosure agreement",)
    assert acronym_expansions("can i get ssp from two employers", titles, used.__contains__) == ("statutory sick pay",)
    assert acronym_expansions("how long does the nda run for", titles) == ()  # every lower-case word a word
    assert acronym_expansions("can i get pay from two employers", titles, used.__contains__) == ()
    assert acronym_expansions("I've got an NDA", ["Visa Eligibility", "Non-Disclosure Agreement"],
                              {"got", "an"}.__contains__) == ("non disclosure agreement",)  # "ve" ends "I've"


def test_a_contract_that_calls_itself_the_agreement_is_found_for_an_nda_question(tmp_path):
    """The term clause says "This Agreement … continues for 2 years" and shares no word with "NDA"; the
    question is searched with the title's spelling out of it too."""
    folder = tmp_path / "kb"
    (folder / "contracts").mkdir(parents=True)
    (folder / "contracts" / "nda.md").write_text(
        "# Mutual Non-Disclosure Agreement\n\n## 7. Term\n\nThis Agreement starts on the Effective Date and "
        "continues for 2 years.\n\n## 8. Notices\n\nNotices must be sent by email to the addresses above.\n")
    (folder / "railway.md").write_text("# Northline Railway\n\nThe railway runs for 118 kilometres and opened in 1874.\n")
    kb = KnowledgeBase.build(folder, {"chunk_chars": 200, "chunk_overlap": 0})
    for question in ("How long does the NDA run for?", "how long does the nda run for"):
        results = Retriever(top_k=2, fusion_alpha=0.6).run(kb, question)
        assert results[0].passage.doc_id == "contracts/nda" and "2 years" in results[0].passage.text, question
    assert kb.uses_word("agreement") and kb.uses_word("the") and not kb.uses_word("nda")
