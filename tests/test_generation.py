"""The generator role (core/generation.py) and the question rewrites built on it (core/stepback.py).

Server behaviour is tested against a real local HTTP stub (tests/fake_openai_server.py); the
local SmolLM2 model runs on two sample questions (marked slow; loaded once per session).
"""
from __future__ import annotations

import json

import pytest

from core import generation, prompts
from core.claims import ClaimBuilder
from core.generation import (Generated, LocalBackend, OpenAICompatibleBackend, TemplateBackend,
                             make_backend)
from core.retrieval import Retriever
from core.stepback import (ClaimRewriter, StepBackRetrieval, StepBackRewriter, rule_stepback,
                           stepback_retrieve)
from core.types import from_dict, to_dict
from tests.conftest import build_small_kb
from tests.fake_openai_server import FakeOpenAIServer
from tests.processes import free_port

pytestmark = pytest.mark.usefixtures("fresh_generation_cache")  # every generation is a real call

MSGS = [{"role": "user", "content": "Say hello."}]


# --- template backend --------------------------------------------------------------------

def test_template_backend_returns_the_fallback_without_touching_the_network(no_network):
    out = TemplateBackend().generate(MSGS, 10, fallback="Hello from the rules.")
    assert out == Generated("Hello from the rules.", "template")
    assert not out.fell_back


def test_a_malformed_prompt_is_a_clear_error():
    with pytest.raises(ValueError, match="role"):
        TemplateBackend().generate([{"role": "robot", "content": "x"}], 10)
    with pytest.raises(ValueError, match="no messages"):
        TemplateBackend().generate([], 10)


def test_make_backend_needs_a_configured_url_for_a_server(monkeypatch):
    monkeypatch.delenv("AW_GENERATOR_URL", raising=False)
    with pytest.raises(ValueError, match="AW_GENERATOR_URL"):
        make_backend("openai")
    with pytest.raises(ValueError, match="http://host:port/v1"):
        OpenAICompatibleBackend("ftp://example", "m")
    with pytest.raises(ValueError, match="unknown generator"):
        make_backend("gpt-17")
    assert isinstance(make_backend("template"), TemplateBackend)
    monkeypatch.setenv("AW_GENERATOR_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("AW_GENERATOR_MODEL", "tiny")
    assert make_backend("openai").id == "openai:tiny@http://127.0.0.1:9/v1"


# --- OpenAI-compatible server (local stub) -----------------------------------------------

def test_server_reply_is_used_labelled_and_cached(monkeypatch):
    monkeypatch.setenv("TEST_GEN_KEY", "sk-test")
    with FakeOpenAIServer(reply="Hello, world.") as server:
        backend = OpenAICompatibleBackend(server.url, "tiny-model", api_key_env="TEST_GEN_KEY", timeout=5)
        first = backend.generate(MSGS, 12, fallback="FALLBACK", stop=("\n",))
        second = backend.generate(MSGS, 12, fallback="FALLBACK", stop=("\n",))
    assert first.text == "Hello, world." and first.backend == f"openai:tiny-model@{server.url}"
    assert not first.cached and second.cached and second.text == first.text
    assert len(server.requests) == 1
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions" and request["authorization"] == "Bearer sk-test"
    assert request["body"] == {"model": "tiny-model", "messages": MSGS, "max_tokens": 12, "temperature": 0,
                               "stop": ["\n"]}


def test_stop_string_cuts_a_server_reply_that_ignores_it():
    with FakeOpenAIServer(reply="\nFirst line.\nSecond line.") as server:
        out = OpenAICompatibleBackend(server.url, "m", timeout=5).generate(MSGS, 20, stop=("\n",))
    assert out.text == "First line."


@pytest.mark.parametrize("mode, message", [
    ("error", "answered HTTP 500"),
    ("garbage", "did not return a chat completion"),
    ("empty", "did not return a chat completion"),
    ("slow", "did not answer within 0.5 s"),
])
def test_server_failures_fall_back_to_the_template_with_a_warning(mode, message):
    with FakeOpenAIServer(mode=mode, delay=2.0) as server:
        backend = OpenAICompatibleBackend(server.url, "m", timeout=0.5)
        out = backend.generate(MSGS, 10, fallback="FALLBACK")
        assert (out.text, out.backend) == ("FALLBACK", "template")
        assert message in out.error and "template fallback" in out.error
        # A failure is not cached: once the server recovers its answer is used.
        server.mode = "ok"
        assert backend.generate(MSGS, 10, fallback="FALLBACK").backend.startswith("openai:")


def test_a_server_that_is_down_falls_back():
    out = OpenAICompatibleBackend(f"http://127.0.0.1:{free_port()}/v1", "m", timeout=2).generate(MSGS, 10, fallback="FB")
    assert out.text == "FB" and "cannot be reached" in out.error


def test_local_backend_without_its_file_falls_back(tmp_path):
    out = LocalBackend(gguf=tmp_path / "missing.gguf").generate(MSGS, 10, fallback="FB")
    assert out.text == "FB" and "does not exist" in out.error


def test_a_bad_thread_count_is_a_warning_not_a_crash(monkeypatch):
    monkeypatch.setenv(generation.THREADS_ENV, "two")
    out = LocalBackend().generate(MSGS, 10, fallback="FB")
    assert out.text == "FB" and "AW_GENERATOR_THREADS" in out.error and "'two'" in out.error


@pytest.mark.parametrize("text, stop, max_lines, done", [
    ("\nWho is eligible", ("\n",), 0, False),  # a leading newline is not a stop
    ("Who is eligible?\nAnd", ("\n",), 0, True),
    ("First.\nSecond.", (), 2, False),  # the second line is not finished yet
    ("First.\nSecond.\n", (), 2, True),
    ("First.\n\nSecond.\nThird", (), 3, False),  # blank lines do not count
    ("The album was released.\nOther.\nthe album  was released.\n", (), 0, True),  # a line repeats
    ("The album was released.\nThe album was released", (), 0, False),  # the repeat is not finished
])
def test_local_decoding_stops_at_a_stop_string_max_lines_or_a_repeated_line(text, stop, max_lines, done):
    assert generation.done_decoding(text, stop, max_lines) is done


def test_max_lines_cuts_a_server_reply_and_is_part_of_the_cache_key():
    with FakeOpenAIServer(reply="\nFirst.\n\nSecond.\nThird.\nFourth.") as server:
        backend = OpenAICompatibleBackend(server.url, "m", timeout=5)
        two = backend.generate(MSGS, 40, max_lines=2)
        three = backend.generate(MSGS, 40, max_lines=3)
    assert (two.text, three.text) == ("First.\nSecond.", "First.\nSecond.\nThird.")
    assert not three.cached and len(server.requests) == 2
    with pytest.raises(ValueError, match="max_lines"):
        backend.generate(MSGS, 40, max_lines=-1)


# --- step-back ------------------------------------------------------------------------------

@pytest.mark.parametrize("question, abstract", [
    ("Can I get the Winter Fuel Payment if I am 67 and live in Harlow?", "Who is eligible for the Winter Fuel Payment?"),
    ("Do I qualify for Carer's Leave for my mother?", "Who is eligible for Carer's Leave?"),
    ("How much is the Winter Fuel Payment?", "How is the Winter Fuel Payment calculated?"),
    ("Which company built the ship that Osric Vell commanded from 1931 to 1945?",
     "Which company built the ship that Osric Vell commanded?"),
    ("When was the Harlow Bridge opened?", "What is known about the Harlow Bridge?"),
    ("In which year was the Greer valve patented?", "What is known about the Greer valve?"),
    ("Can my employer refuse parental leave?", "What is known about parental leave?"),
    ("How much is my rent support payment?", "How is the rent support payment calculated?"),
    ("Is he still alive?", "Is he still alive?"),  # nothing specific to drop: the question stays
])
def test_rule_stepback_drops_the_specifics(question, abstract):
    assert rule_stepback(question) == abstract


def test_template_stepback_is_the_rule_and_stays_offline(no_network):
    out = StepBackRewriter().run("Can I get the Winter Fuel Payment if I am 67?")
    assert (out.abstract, out.source, out.warning) == ("Who is eligible for the Winter Fuel Payment?", "rules", "")


@pytest.mark.parametrize("reply, accepted", [
    ("Who is eligible for the Winter Fuel Payment?", True),
    ("The Winter Fuel Payment is paid in winter.", False),  # not a question
    ("What is the weather like on Mars?", False),  # another topic
])
def test_stepback_from_a_server_is_accepted_only_when_it_passes(reply, accepted):
    question = "Can I get the Winter Fuel Payment if I am 67?"
    with FakeOpenAIServer(reply=reply) as server:
        out = StepBackRewriter(OpenAICompatibleBackend(server.url, "m", timeout=5)).run(question)
    assert (out.abstract == reply) is accepted
    assert out.source == (f"openai:m@{server.url}" if accepted else "rules")
    assert out.generated == reply and bool(out.warning) is not accepted


DOCS = {
    "winter_fuel.md": "# Winter Fuel Payment\n\nYou can get the Winter Fuel Payment if you are aged 66 or over "
                      "and have lived in Calvera for at least 3 years. The payment is £200 a year.\n",
    "bus_pass.md": "# Older person's bus pass\n\nAnyone aged 66 or over who lives in Calvera can get a free "
                   "bus pass from the council.\n",
    "library.md": "# Library\n\nJoining the library is free for everyone who lives in the borough.\n",
}


@pytest.fixture(scope="module")
def small_kb(tmp_path_factory):
    return build_small_kb(tmp_path_factory.mktemp("gen") / "kb", DOCS)


def test_stepback_retrieval_keeps_both_lists_and_merges(small_kb):
    question = "Can I get the Winter Fuel Payment if I am 67 and live in Harlow?"
    retriever = Retriever(top_k=2, fusion_alpha=0.6)
    out = stepback_retrieve(small_kb, question, retriever)
    assert out.stepback.abstract == "Who is eligible for the Winter Fuel Payment?"
    assert [p.rank for p in out.merged] == [1, 2] and len(out.merged_from) == 2
    for got, query in ((out.original, question), (out.abstract, out.stepback.abstract)):
        alone = retriever.run(small_kb, query)
        assert [p.passage.id for p in got] == [p.passage.id for p in alone]
        assert [p.fused for p in got] == pytest.approx([p.fused for p in alone], abs=1e-4)
    assert out.merged[0].passage.doc_id == "winter_fuel" and out.merged_from[0] == "both"
    ids = {p.passage.id for p in out.original} | {p.passage.id for p in out.abstract}
    assert {p.passage.id for p in out.merged} <= ids
    assert from_dict(StepBackRetrieval, json.loads(json.dumps(to_dict(out)))) == out


# --- claim rewriting --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def rules():
    return ClaimBuilder()


@pytest.mark.parametrize("question, reply, accepted", [
    ("When was the Harlow Bridge opened?", "There exists a date when the Harlow Bridge was opened.", True),
    ("When was the Harlow Bridge opened?", "One of Harlow Bridge was opened in 2019.", False),  # wrong schema
    ("In which town was the designer of the Harlow Bridge born?",
     "There exists a person who was born in the city of Harlow.", False),  # drops "designer", "bridge"
    ("Can I get the Winter Fuel Payment?", "Yes, you can get the Winter Fuel Payment.", False),
    ("Can I get the Winter Fuel Payment?", "I can get the Winter Fuel Payment", True),
    ("Which is longer, the River Ost or the River Vell?", "One of the River Ost or the River Vell is longer.", True),
])
def test_generated_claims_must_keep_the_schema_and_the_content(rules, question, reply, accepted):
    rule_claim = rules.run(question)
    with FakeOpenAIServer(reply=reply) as server:
        out = ClaimRewriter(OpenAICompatibleBackend(server.url, "m", timeout=5)).run(question, rule_claim)
    assert out.accepted is accepted and out.rule_claim == rule_claim and out.generated == reply
    if accepted:
        assert out.claim.text == reply.rstrip(".") + "." and out.claim.source.startswith("openai:")
        assert (out.claim.schema, out.claim.sub_claims, out.claim.answer_type) == \
            (rule_claim.schema, rule_claim.sub_claims, rule_claim.answer_type)
    else:
        assert out.claim == rule_claim and out.warning


def test_statements_are_not_rewritten(rules, no_network):
    statement = rules.run("Receiving Party shall destroy all Confidential Information upon termination.")
    backend = OpenAICompatibleBackend("http://127.0.0.1:9/v1", "m")
    assert ClaimRewriter(backend).run(statement.text, statement).claim == statement


# --- the real local model -------------------------------------------------------------------

@pytest.fixture(scope="module")
def local():
    backend = LocalBackend()
    try:
        backend.load()
    except generation.GenerationError as exc:
        pytest.skip(str(exc))
    return backend


@pytest.mark.slow
def test_local_model_rewrites_a_question_as_an_existential_claim(local, rules, no_network):
    question = "When was the Harlow Bridge opened?"
    out = ClaimRewriter(local).run(question, rules.run(question))
    assert out.accepted, out.warning
    assert out.claim.source == local.id == "local:SmolLM2-135M-Instruct.Q4_1"
    assert out.claim.text.startswith("There exists") and "Harlow Bridge" in out.claim.text


@pytest.mark.slow
def test_local_decoding_is_plain_greedy_and_restores_torch_threads(local, monkeypatch):
    """The prefix cache and prompt-lookup drafts change the speed, not the text: the reply is
    transformers' own greedy decoding of the same prompt, token for token."""
    import torch
    tokenizer, model = local.load()
    monkeypatch.setenv(generation.THREADS_ENV, "1")
    before = torch.get_num_threads()
    for messages in (prompts.stepback("Which school did the designer of the Harlow Bridge attend in 1950?"),
                     prompts.premises("Can the recipient share the information with consultants?",
                                      ["The Recipient may disclose Confidential Information to its employees, "
                                       "officers and professional advisers who need to know it for the Purpose."],
                                      [], 3)):
        ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt",
                                            return_dict=True)
        with torch.no_grad():
            out = model.generate(**ids, max_new_tokens=40, do_sample=False, pad_token_id=tokenizer.eos_token_id)
        plain = tokenizer.decode(out[0][ids["input_ids"].shape[1]:], skip_special_tokens=True).strip()
        ours = local.generate(messages, 40)
        assert ours.text == plain and ours.backend == local.id and not ours.cached
    assert torch.get_num_threads() == before


@pytest.mark.slow
def test_local_premises_stop_after_m_lines(local):
    messages = prompts.premises("Who won the 1998 World Cup final?", [], [], 2)
    out = local.generate(messages, 64, max_lines=2)
    assert out.backend == local.id and 1 <= len(out.text.splitlines()) <= 2


@pytest.mark.slow
def test_local_model_steps_back_and_is_cached(local):
    question = "Can I get the Winter Fuel Payment if I am 67 and have lived in Calvera for 2 years?"
    first = StepBackRewriter(local).run(question)
    assert first.abstract.endswith("?") and "Winter Fuel Payment" in first.abstract
    assert first.source in (local.id, "rules") and first.generated  # the model's output is kept either way
    again = local.generate(prompts.stepback(question), 32, stop=("\n",))
    assert again.cached and again.backend == local.id
