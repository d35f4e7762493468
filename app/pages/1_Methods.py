"""Every formula the pipeline uses, where it comes from, and its value for the question on Inspect."""
import sys
from pathlib import Path

# `streamlit run` puts only app/ on the import path; the pages import core/, components/ and app/.
if (ROOT := str(Path(__file__).resolve().parents[2])) not in sys.path:
    sys.path.insert(0, ROOT)

import streamlit as st

from app import wiring
from components.common import md
from components.settings_panel import current_values

st.set_page_config(page_title="Methods · Answerability Workbench", page_icon="📐", layout="wide")

values = current_values()
analysis = wiring.current_analysis(values)
trace, decision = analysis if analysis else (None, None)
s = trace.signals if trace else None

st.title("Methods", anchor=False)
if trace:
    st.caption(f"Live values are for the question loaded on Inspect: “{trace.query.question}” "
               f"(settings as in the sidebar there).")
else:
    st.info("Analyse a question on the Inspect page to see each formula's live values here.")


def method(title: str, latex: str, explanation: str, seed: str, live: str | None) -> None:
    with st.container(border=True):
        st.subheader(title, anchor=False)
        st.latex(latex)
        st.markdown(explanation)
        st.caption(f"Source: {seed}")
        if trace is not None:
            st.markdown("**Live:** " + (live if live else "not computed for this question."))


def v(name: str) -> float:
    return float(values[name])


method("Confidence Conf(q)",
       r"\mathrm{Conf}(q)=\sigma\!\left(\frac{\max_{d\in D}\cos(q,d)-c}{s}\right)",
       "The best dense cosine between the question and a passage (seed Eq. 10), squashed by a sigmoid so "
       "that 0.5 sits at the centre c. It says whether anything in the KB is close to the question.",
       "seed 002 §3.4, Eq. 10 (Conf = max sim); sigmoid calibration: core/signals.py",
       s and f"max cos = {s.dense_top:.3f}, c = {v('conf_center'):.2f}, s = {v('conf_scale'):.2f} → "
             f"Conf = **{s.confidence:.3f}**")
method("Coverage(q)",
       r"\mathrm{Coverage}(q)=\frac{|\,\mathrm{terms}(q)\cap\mathrm{terms}(D)\,|}{|\,\mathrm{terms}(q)\,|}",
       "The share of the question's content words (stopwords removed) found in the retrieved passages. "
       "Low Conf and low Coverage together mean the topic is absent.",
       "seed 002 §3.4, Eq. 11", s and f"Coverage = **{s.coverage:.3f}**")
method("Ambiguity Amb(q)",
       r"\mathrm{Amb}(q)=\max_{k=1..K} h_k(q)\qquad(\text{seed: }\tfrac{1}{K}\textstyle\sum_k h_k(q))",
       "Five heuristics in [0, 1]: short query, dangling pronoun, vague quantifier, no named entity, incomplete "
       "comparison. The workbench takes their maximum so that any one can trip the gate alone.",
       "seed 002 §3.5, Eq. 12", s and (", ".join(f"{k} {x:.2f}" for k, x in s.ambiguity_heuristics.items())
                                     + f" → Amb = **{s.ambiguity:.3f}**"))
method("Conflict(q)",
       r"\mathrm{Conflict}(q)=1-\frac{2}{k(k-1)}\sum_{i=1}^{k-1}\sum_{j=i+1}^{k}\cos(e_i,e_j)",
       "Mean pairwise dissimilarity of the top passages' embeddings (topic spread). The workbench also measures "
       "NLI conflict: the largest P(contradiction) between the best sentences of two top passages.",
       "seed 002 §3.6, Eq. 13",
       s and f"k = {int(v('conflict_top_n'))}: Conflict = **{s.topic_spread:.3f}**; NLI conflict = "
             f"**{s.nli_conflict:.3f}**")
method("Joint answerability A(q)",
       r"A(q)=\mathrm{Conf}(q)\cdot\mathrm{Coverage}(q)\cdot(1-\mathrm{Amb}(q))\cdot(1-\mathrm{Conflict}(q))",
       "One number that collapses when any factor fails. Shown for teaching; the gate thresholds each factor "
       "separately, which lets an extreme signal decide alone.",
       "seed 002 §3.7, Eq. 14",
       s and f"{s.confidence:.3f} · {s.coverage:.3f} · (1 − {s.ambiguity:.3f}) · (1 − {s.topic_spread:.3f}) = "
             f"**{s.answerability:.3f}**")
known, missing = (len(trace.variables.known), len(trace.variables.missing)) if trace else (0, 0)
method("Incompleteness I(q)",
       r"I(q)=\frac{|V_{\mathrm{missing}}|}{|V_{\mathrm{known}}|+|V_{\mathrm{missing}}|}",
       "Known variables are what the user stated plus established conditions; missing ones are conditions of the "
       "best evidence that their facts do not settle. I(q) > τ_i sends the gate to ASK.",
       "seed 002 §3.1, Eq. 2 (and Eq. 21's τ_i)",
       trace and f"{missing} / ({known} + {missing}) = **{trace.variables.incompleteness:.3f}**")
method("Resolution rate ρ_t",
       r"\rho_t=\frac{|V_{\mathrm{known},t}|}{|V_{\mathrm{known},t}|+|V_{\mathrm{missing},t}|}=1-I_t(q)",
       "How much of what the answer needs is known at dialogue turn t; each answered follow-up in the history "
       "moves a variable from missing to known and raises it.",
       "seed 002 §3.8, Eq. 15 (state update Eq. 20)",
       trace and f"turn t = {len(trace.query.history)}: ρ = **{1 - trace.variables.incompleteness:.3f}**"
       if (known + missing) else None)
method("Decision boundary",
       r"a=\begin{cases}\text{ASK} & \mathrm{Conflict}(q)>\tau_{con}\\"
       r"\text{ABSTAIN} & \mathrm{Conf}(q)<\tau_c\wedge\mathrm{Coverage}(q)<\tau_{cov}\\"
       r"\text{ASK} & \mathrm{Amb}(q)>\tau_a\ \vee\ I(q)>\tau_i\\"
       r"\text{ABSTAIN} & \mathrm{Sufficiency}(Q,E)<\tau\\"
       r"\text{ANSWER} & \text{otherwise}\end{cases}",
       "The gate checks its rules in priority order and the first enabled rule whose comparisons hold decides "
       "(the Inspect page lists all of them with their numbers). Two departures from the seed, both measured on "
       "the sample KB, ShARC and ContractNLI: Amb > τ_a asks only when the evidence sets no conditions on the "
       "asker (a vague \"Can I get this?\" is pinned down by the rule passage it retrieved; what is missing is "
       "then asked by I(q) > τ_i), and the evidence-coverage rule of seed 003 abstains when topics stay uncovered. "
       "The defaults are the best mean macro-F1 over the three labelled sets (scripts/tune_defaults.py).",
       "seed 002 §3.12 Eq. 21 and §5.3 rules; seed 004 layer 1; seed 000 (τ)",
       decision and f"fired **{decision.rule}** → **{decision.action}**: {md(decision.reason)}")
method("Sufficiency(Q, E)",
       r"\mathrm{Sufficiency}(Q,E)=\max_{p\,\in\,\mathrm{kept}}P_{\mathrm{NLI}}(\mathrm{entail}\mid p,\ \mathrm{claim}(Q))",
       "Whether the evidence entails the claim; below τ the premises stage looks for a missing premise "
       "(seed 000, the Candidate premises panel): one the knowledge base supports lets the gate answer, "
       "otherwise it abstains.",
       "seed 000 (Sufficiency(Q, E) < τ)",
       s and f"Sufficiency = **{s.sufficiency:.3f}** vs τ = {v('sufficiency_min'):.2f}")
method("Premise score Score(p)",
       r"\mathrm{Score}(p_i)=\alpha\cdot\mathrm{Entail}(E,p_i)+\beta\cdot\mathrm{Retrieve}(p_i),\quad "
       r"p^*=\arg\max_i \mathrm{Score}(p_i)",
       "A candidate missing premise must be consistent with the evidence (NLI) and plausible (retrievable); "
       "the best valid one, p*, completes the reasoning chain.",
       "seed 000, validation step", None)
method("Hybrid retrieval score",
       r"\mathrm{fused}(d)=\alpha\cdot\cos(q,d)+(1-\alpha)\cdot\frac{\mathrm{BM25}(q,d)}{\max_{d'}\mathrm{BM25}(q,d')}",
       "Dense and lexical retrieval fused; passages are ranked by the fused score.",
       "seed 002, hybrid retrieval",
       trace and trace.passages and (
           f"rank 1: {v('fusion_alpha'):.2f}·{trace.passages[0].dense:.3f} + {1 - v('fusion_alpha'):.2f}·"
           f"{trace.passages[0].bm25_norm:.3f} = **{trace.passages[0].fused:.3f}**"))
method("Entailment filter",
       r"\mathrm{keep}(p)\iff \max_{s\in p}P_{\mathrm{NLI}}(\mathrm{entail}\mid s,\ \mathrm{claim})\ \ge\ \tau_e"
       r"\quad(\text{none kept}\Rightarrow\text{keep all})",
       "NLI removes retrieved passages that do not support the claim; if none does, all are kept (fallback).",
       "seed 001",
       trace and f"{sum(n.kept for n in trace.nli)} of {len(trace.nli)} kept at τ_e = {v('entail_keep'):.2f}"
       + (" (fallback)" if trace.fallback else ""))
subgraph = getattr(trace, "subgraph", None)
method("Edge weight and PathScore",
       r"w_e=\min\!\big(0.95,\ \alpha\cdot\mathrm{sem}(e)+(1-\alpha)\cdot\mathrm{act}(e)\big),\qquad "
       r"\mathrm{PathScore}(q)=\max_{p\in P(q)}\prod_{e\in p}w_e",
       "Knowledge-graph edges weigh how well their triple is grounded in its passage (sem) and how answering "
       "with it went (act); a strong path supports ANSWER, a broken one ASK, none ABSTAIN.",
       "seed 002 §3.9, Eq. 17, 18 and 22",
       subgraph and f"PathScore = **{subgraph.path_score:.3f}** over {len(subgraph.path)} nodes")
method("Pragmatic evidence selection",
       r"\begin{aligned}&E\leftarrow\emptyset,\ T\leftarrow\mathrm{topics}(q)\\"
       r"&\textbf{while } T\neq\emptyset:\ s^*=\arg\max_{s\notin E}\mathrm{align}(s,T);\ "
       r"E\leftarrow E\cup\{s^*\};\ T\leftarrow T\setminus\mathrm{topics}(s^*)\end{aligned}",
       "Pick the sentences that cover every topic of the question and no more (Grice's maxims of quantity and "
       "relevance), then highlight them inside their passages.",
       "seed 003 (pragmatic evidence retrieval)",
       trace and trace.nli and ("until the evidence stage lands the highlight is the best-NLI sentence of each "
                                "passage"))
