"""Panel 5: the knowledge-graph subgraph, drawn with pyvis, fully offline.

``render_subgraph`` shows a Trace's ``Subgraph``: the nodes the question matched (thick border),
the best path in red with PathScore spelled out as the product of its edge weights, and the ?var
nodes of missing variables on dashed ``requires`` edges. ``graph_html`` takes plain dicts:
nodes ``{id, label, kind ('entity' | 'var'), category}`` and edges
``{source, target, relation, weight, sentence}``. Every label and tooltip is
HTML-escaped in Python; in the page a DOMParser turns the escaped text back into
plain text (it never runs scripts) which vis-network draws on the canvas or sets
with ``innerText``, so a document's ``<script>`` shows as text and never runs.
"""
from __future__ import annotations

import json
import re
from typing import Any, Mapping, Sequence

import streamlit as st

from components.common import esc, md, panel_header
from core.types import Subgraph, to_dict

HELP = ("Seed 002 §6: entities of the kept passages linked by the relations their sentences state. "
        "Edge weight w_e = min(0.95, α·sem(e) + (1−α)·act(e)) (Eq. 17/22), drawn as line width; "
        "PathScore(q) = max over paths of ∏ w_e (Eq. 18). ?var nodes are missing variables anchored to an entity. "
        "Hover a node or an edge for its source sentence.")
EMPTY = ("The question matched no node of the knowledge graph: no entity of it (and nothing close to it) "
         "was extracted from the knowledge base (seed 002 §3.1: a topic with no graph nodes is unrecoverable).")
NO_STAGE = "This trace has no knowledge-graph subgraph: it was analysed without the KG stage."
NO_MATCH = ("No entity of the question matched a node of the knowledge graph (kg_matched = 0): "
            "there is nothing to draw.")
KG_RULE_ON = " The kg_empty rule is on: it abstains on such a question."
LAYOUT_SEED = 7
PALETTE = ("#4e79a7", "#59a14f", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#e15759")
VAR_COLOR = "#f28e2b"
PATH_COLOR = "#d62728"
MATCH_BORDER = "#111111"
VAR_LABEL_CHARS = 40

_REMOTE = (re.compile(r"<!--.*?-->", re.S),
           re.compile(r"<script\b[^>]*\bsrc\s*=[^>]*>\s*</script>", re.S | re.I),
           re.compile(r"<link\b[^>]*>", re.S | re.I),
           re.compile(r"<center>\s*<h1>\s*</h1>\s*</center>", re.S))
_CREATE = "network = new vis.Network(container, data, options);"
# A graph drawn while its frame has no size (Streamlit lays out a tab that is not open with none) is fitted to
# nothing: its nodes sat in the top-left corner, cut off, once the tab opened. Fit it again whenever the frame's
# size changes.
_REFIT = """<script>(function () {
  var box = document.getElementById("mynetwork");
  if (!box || !window.ResizeObserver) { return; }
  new ResizeObserver(function () {
    if (typeof network !== "undefined" && box.clientWidth > 0 && box.clientHeight > 0) { network.redraw(); network.fit(); }
  }).observe(box);
})();</script>"""
# Escaped strings → plain text for vis-network: labels are drawn on the canvas, tooltips set as elements.
_DECODE = """function awText(s) { return new DOMParser().parseFromString(s || "", "text/html").documentElement.textContent; }
                  function awTip(s) { var el = document.createElement("div"); el.innerText = awText(s);
                                      el.style.whiteSpace = "pre-wrap"; el.style.maxWidth = "420px"; return el; }
                  nodes.update(nodes.get().map(function (n) { return {id: n.id, label: awText(n.label), title: awTip(n.tip)}; }));
                  edges.update(edges.get().map(function (e) { return {id: e.id, label: awText(e.label), title: awTip(e.tip)}; }));
                  """


_AUXILIARIES = ("was", "were", "is", "are", "has", "have", "had", "been")


def readable_relation(edge: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    """The relation as the sentence stated it ("born in", "designed by"), not its lemma key
    ("bear_in"): the validated triple sentence ``text`` is "<source> <verb words> <target>.", so the
    words between the two labels are the phrase; a leading auxiliary is dropped."""
    relation = str(edge.get("relation", ""))
    text = str(edge.get("text", "")).strip().rstrip(".")
    source, target = labels.get(str(edge.get("source")), ""), labels.get(str(edge.get("target")), "")
    if source and target and text.startswith(source) and text.endswith(target) and len(text) > len(source + target):
        words = text[len(source):len(text) - len(target)].split()
        while len(words) > 1 and words[0].lower() in _AUXILIARIES:
            words = words[1:]
        if words:
            return " ".join(words)
    return relation.replace("_", " ")


def categories(nodes: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """A fixed colour per entity category, in sorted order (stable across reruns)."""
    cats = sorted({str(n.get("category") or "entity") for n in nodes if n.get("kind") != "var"})
    return {c: PALETTE[i % len(PALETTE)] for i, c in enumerate(cats)}


def legend_html(colors: Mapping[str, str], has_var: bool, has_path: bool = False, has_match: bool = False) -> str:
    items = [f'<span style="color:{c}">●</span> {esc(cat)}' for cat, c in colors.items()]
    if has_var:
        items.append(f'<span style="color:{VAR_COLOR}">◆</span> ?var (missing variable, dashed)')
    if has_match:
        items.append(f'<span style="color:{MATCH_BORDER}">◉</span> matched by the question')
    if has_path:
        items.append(f'<span style="color:{PATH_COLOR}">━</span> best path (PathScore)')
    items.append("line width ∝ edge weight w<sub>e</sub>")
    return ('<div id="aw-legend" style="font:12px sans-serif;color:#333;padding:2px 4px 6px 4px">'
            + " &nbsp;·&nbsp; ".join(items) + "</div>")


def path_edges(path: Sequence[str], edges: Sequence[Mapping[str, Any]]) -> list[int]:
    """Indices in ``edges`` of the edges joining consecutive nodes of ``path`` (either direction)."""
    out = []
    for a, b in zip(path, path[1:]):
        hit = [i for i, e in enumerate(edges) if {str(e["source"]), str(e["target"])} == {a, b}]
        if hit:
            out.append(max(hit, key=lambda i: float(edges[i].get("weight", 0.0))))
    return out


def graph_html(nodes: Sequence[Mapping[str, Any]], edges: Sequence[Mapping[str, Any]], height: int = 420,
               path: Sequence[str] = (), matched: Sequence[str] = ()) -> str:
    """A self-contained HTML page (vis-network inlined, no remote resource) drawing the graph; the
    ``matched`` nodes get a thick dark border and the edges along ``path`` are red."""
    from pyvis.network import Network
    colors = categories(nodes)
    on_path, matched = set(path_edges(path, edges)), set(matched)
    net = Network(height=f"{height}px", width="100%", directed=True, cdn_resources="in_line")
    for n in nodes:
        is_var = n.get("kind") == "var"
        category = str(n.get("category") or "entity")
        label = str(n.get("label", n["id"]))
        tip = f"{label}\n{'missing variable' if is_var else category}"
        if is_var:
            short = label if len(label) <= VAR_LABEL_CHARS else label[:VAR_LABEL_CHARS].rsplit(" ", 1)[0] + "…"
            label = short if short.startswith("?") else f"?{short}"
        style = ({"shape": "diamond", "color": VAR_COLOR, "shapeProperties": {"borderDashes": [4, 3]},
                  "borderWidth": 2} if is_var else {"shape": "dot", "color": colors[category]})
        if str(n["id"]) in matched:
            tip += "\nmatched by the question"
            style.update(borderWidth=4, color={"background": colors.get(category, VAR_COLOR), "border": MATCH_BORDER})
        net.add_node(str(n["id"]), label=esc(label), tip=esc(tip), size=14, **style)
    labels = {str(n["id"]): str(n.get("label", n["id"])) for n in nodes}
    for i, e in enumerate(edges):
        weight = float(e.get("weight", 0.5))
        relation = readable_relation(e, labels)
        tip = f"{relation} (w = {weight:.2f})\n{e.get('sentence', '')}".strip()
        style: dict[str, Any] = {"dashes": True} if e.get("relation") == "requires" else {}
        if i in on_path:
            style["color"] = PATH_COLOR
            tip += "\non the best path (PathScore)"
        net.add_edge(str(e["source"]), str(e["target"]), id=f"e{i}", label=esc(relation), tip=esc(tip),
                     width=1 + 5 * max(0.0, min(1.0, weight)), arrows="to", **style)
    net.set_options(json.dumps({
        "layout": {"randomSeed": LAYOUT_SEED, "improvedLayout": True},
        "physics": {"enabled": True, "solver": "forceAtlas2Based",
                    "stabilization": {"enabled": True, "iterations": 300, "fit": True}},
        "interaction": {"hover": True, "tooltipDelay": 120},
        "edges": {"font": {"size": 10, "align": "middle"}, "color": {"color": "#888"},
                  "smooth": {"enabled": True, "type": "dynamic"}},
        "nodes": {"font": {"size": 13}},
    }))
    page = net.generate_html()
    for pattern in _REMOTE:
        page = pattern.sub("", page)
    if _CREATE not in page:
        raise RuntimeError("pyvis's template changed: cannot find where the network is created")
    page = page.replace(_CREATE, _DECODE + _CREATE, 1)
    legend = legend_html(colors, any(n.get("kind") == "var" for n in nodes), bool(on_path),
                         any(str(n["id"]) in matched for n in nodes))
    # pyvis sizes the canvas 100% wide plus a border, which the iframe clips at the right: count the
    # border inside the width.
    page = page.replace("</head>", "<style>#mynetwork{box-sizing:border-box}html,body{margin:0;overflow:hidden}"
                                   "</style></head>", 1)
    page = page.replace("</body>", _REFIT + "</body>", 1)
    return page.replace("<body>", "<body style='margin:0'>" + legend, 1)


def render_graph(nodes: Sequence[Mapping[str, Any]], edges: Sequence[Mapping[str, Any]], height: int = 420) -> None:
    panel_header("Knowledge-graph subgraph", HELP)
    if not nodes:
        st.info(EMPTY)
        return
    st.iframe(graph_html(nodes, edges, height), height=height + 40)


def path_markdown(subgraph: Subgraph) -> str:
    """PathScore with its path: each hop with its relation and weight, the product, complete or not."""
    labels = {n.id: n.label for n in subgraph.nodes}
    edges = [to_dict(e) for e in subgraph.edges]
    hops = [subgraph.edges[i] for i in path_edges(subgraph.path, edges)]
    verdict = "complete" if subgraph.complete_path else "broken: below the path threshold"
    if hops:
        steps = [md(labels.get(subgraph.path[0], subgraph.path[0]))]
        for here, e in zip(subgraph.path[1:], hops):
            phrase = md(readable_relation(to_dict(e), labels))
            arrow = f" —{phrase}→ " if e.target == here else f" ←{phrase}— "
            steps.append(f"{arrow}{md(labels.get(here, here))}")
        factors = " × ".join(f"{e.weight:.2f}" for e in hops)
        line = (f"**PathScore** = {factors} = **{subgraph.path_score:.3f}** ({verdict}) along "
                + "".join(steps))
    else:
        line = f"**PathScore** = **{subgraph.path_score:.3f}**: no path between matched entities"
    matched = " · ".join(f"{md(labels.get(m.node, m.node))} ({m.via}, {m.score:.2f})" for m in subgraph.matched)
    lines = [line, f"**Matched** ({subgraph.n_matched}): {matched or 'none'}"]
    var_edges = {e.target: e.source for e in subgraph.edges if e.relation == "requires"}
    vars_ = [f"“{md(n.label)}” on {md(labels.get(var_edges.get(n.id, ''), '?'))}"
             for n in subgraph.nodes if n.kind == "var"]
    if vars_:
        lines.append("**?var** (missing variables anchored to an entity): " + " · ".join(vars_))
    if subgraph.unanchored:
        lines.append("**No anchor close enough:** " + " · ".join(f"“{md(u)}”" for u in subgraph.unanchored))
    return "\n\n".join(lines)


def render_subgraph(subgraph: Subgraph | None, height: int = 420, kg_rule_on: bool = False) -> None:
    """A Trace's subgraph: PathScore with its path, the matches, the ?vars, and the drawing. An empty one says
    what it means for the verdict only where the kg_empty rule is on (``kg_rule_on``): off, as by default, it
    means nothing for it."""
    panel_header("Knowledge-graph subgraph", HELP)
    if subgraph is None:
        st.info(NO_STAGE)
        return
    if not subgraph.nodes:
        st.info(NO_MATCH + (KG_RULE_ON if kg_rule_on else ""))
        return
    st.markdown(path_markdown(subgraph))
    st.iframe(graph_html([to_dict(n) for n in subgraph.nodes], [to_dict(e) for e in subgraph.edges], height,
                         subgraph.path, [m.node for m in subgraph.matched]), height=height + 40)
