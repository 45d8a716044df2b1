"""The topic-graph picture: the crawled tags and their edges, as an inline SVG.

Read from the dataset's ``tag_pages`` (the tags crawled) and ``tag_edges`` (``from_tag``,
``to``, ``kind``: related | parent | subtopic | writer). The layout is deterministic and needs
no library: columns are breadth-first layers from the seed tags over the crawled tags'
edges (hop 0, 1, 2, …); the ends that were not crawled stand in two last columns, other tags
and writers; in a column, nodes are sorted by name. Lines are coloured by kind.

Legible up to :data:`MAX_NODES` nodes: beyond that the crawled tags nearest the seeds are
kept first, then the ends most pointed at, and the picture says how many tags, writers and
edges were left out.
"""

from __future__ import annotations

import html
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from topics_crawler.dataset.parts import read_table
from topics_crawler.output.exporters import records_of

#: Most nodes drawn (the rest is counted in the picture).
MAX_NODES = 50
KIND_COLOURS = {
    "related": "#1f77b4",
    "parent": "#2ca02c",
    "subtopic": "#ff7f0e",
    "writer": "#9467bd",
}
NO_EDGES = (
    "No topic map: this dataset has no tag edges (they come with tag pages; "
    "crawl with -a related_depth=N to follow related tags)."
)
COLUMN_WIDTH, ROW_HEIGHT, MARGIN, LEGEND = 200, 22, 16, 40
#: Where the first column stands (room left of it for the arcs within a column).
LEFT = MARGIN + 40
MIN_WIDTH = 720
#: Where the first row stands (room above it for the arcs of edges pointing back).
TOP = MARGIN + 60
#: Longest label drawn (a longer name is cut, whole in the node's tooltip).
LABEL_CHARACTERS = 26
#: Width of one label character, about, at 12 px (where a forward edge starts).
CHARACTER_WIDTH = 6.6


@dataclass(frozen=True)
class Edge:
    from_tag: str
    to: str
    kind: str


@dataclass(frozen=True)
class TopicGraph:
    """What the picture draws: nodes by column, the edges between drawn nodes, the rest."""

    columns: list[tuple[str, list[str]]]
    """``(column title, node names)`` left to right."""
    edges: list[Edge]
    crawled: frozenset[str]
    left_out_nodes: int = 0
    left_out_edges: int = 0

    @property
    def nodes(self) -> list[str]:
        return [node for _title, names in self.columns for node in names]


def load_topic_graph(directory: Path, seeds: Sequence[str]) -> TopicGraph | None:
    """The graph of a dataset directory (None when it has no tag edges)."""
    edges_path, pages_path = directory / "tag_edges.parquet", directory / "tag_pages.parquet"
    if not edges_path.exists():
        return None
    table = records_of(read_table(edges_path, columns=["from_tag", "to", "kind"]))
    edges = [Edge(r["from_tag"], r["to"], r["kind"]) for r in table if r["from_tag"] and r["to"]]
    crawled: list[str] = []
    if pages_path.exists():
        tags = read_table(pages_path, columns=["tag"]).column("tag").to_pylist()
        crawled = [tag for tag in tags if isinstance(tag, str)]
    return topic_graph(crawled, edges, seeds)


def topic_graph(
    crawled: Iterable[str], edges: Sequence[Edge], seeds: Sequence[str], limit: int = MAX_NODES
) -> TopicGraph | None:
    """Lay out ``edges`` around the ``crawled`` tags (None when there is no edge)."""
    edges = list(dict.fromkeys(edges))
    if not edges:
        return None
    crawled_set = set(crawled) | {edge.from_tag for edge in edges}
    layer = _layers(crawled_set, edges, [s for s in seeds if s in crawled_set])
    pointed_at = Counter(edge.to for edge in edges if edge.to not in crawled_set)
    ends = sorted(pointed_at, key=lambda node: (-pointed_at[node], node))
    ranked = sorted(crawled_set, key=lambda node: (layer[node], node)) + ends
    drawn = set(ranked[:limit])
    columns: dict[str, list[str]] = defaultdict(list)
    for node in sorted(drawn):
        if node in crawled_set:
            columns[f"hop {layer[node]}" if layer[node] else "seed tags"].append(node)
        else:
            columns["writers" if node.startswith("@") else "other tags"].append(node)
    order = sorted(
        columns, key=lambda t: (t == "writers", t == "other tags", t != "seed tags", len(t), t)
    )
    kept = [edge for edge in edges if edge.from_tag in drawn and edge.to in drawn]
    kept.sort(key=lambda edge: (edge.from_tag, edge.kind, edge.to))
    return TopicGraph(
        columns=[(title, columns[title]) for title in order],
        edges=kept,
        crawled=frozenset(crawled_set),
        left_out_nodes=len(ranked) - len(drawn),
        left_out_edges=len(edges) - len(kept),
    )


def _layers(crawled: set[str], edges: Sequence[Edge], seeds: list[str]) -> dict[str, int]:
    """Hops from the seeds between crawled tags over ``related`` edges (what a
    ``related_depth`` crawl follows), then over any edge for tags those do not reach; a
    crawled tag still unreached starts a layer-0 walk of its own (in name order)."""
    related: dict[str, list[str]] = defaultdict(list)
    every: dict[str, list[str]] = defaultdict(list)
    for edge in edges:
        if edge.to in crawled:
            every[edge.from_tag].append(edge.to)
            if edge.kind == "related":
                related[edge.from_tag].append(edge.to)
    layer = dict.fromkeys(seeds, 0)
    _walk(list(seeds), related, layer)
    _walk(sorted(layer, key=lambda node: (layer[node], node)), every, layer)
    for node in sorted(crawled):
        if node not in layer:
            layer[node] = 0
            _walk([node], every, layer)
    return layer


def _walk(frontier: list[str], out: dict[str, list[str]], layer: dict[str, int]) -> None:
    """Breadth-first from ``frontier`` (already in ``layer``), giving unseen nodes a layer."""
    while frontier:
        following = []
        for node in frontier:
            for target in out[node]:
                if target not in layer:
                    layer[target] = layer[node] + 1
                    following.append(target)
        frontier = following


def svg(graph: TopicGraph) -> str:
    """The picture as an SVG element (no script, no external reference)."""
    esc = html.escape
    position: dict[str, tuple[int, int]] = {}
    tallest = max(len(names) for _title, names in graph.columns)
    for column, (_title, names) in enumerate(graph.columns):
        for row, node in enumerate(names):
            position[node] = (LEFT + column * COLUMN_WIDTH, TOP + row * ROW_HEIGHT)
    width = max(MIN_WIDTH, LEFT + MARGIN + len(graph.columns) * COLUMN_WIDTH)
    height = TOP + MARGIN + tallest * ROW_HEIGHT + LEGEND
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="topic-graph" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="Topic graph: {len(position)} nodes, {len(graph.edges)} edges" '
        'font-family="system-ui,sans-serif" font-size="12">'
    ]
    for column, (title, _names) in enumerate(graph.columns):
        x = LEFT + column * COLUMN_WIDTH
        parts.append(f'<text x="{x}" y="{MARGIN + 10}" font-weight="bold">{esc(title)}</text>')
    for edge in graph.edges:
        parts.append(_edge_path(edge, position))
    for node, (x, y) in position.items():
        crawled = node in graph.crawled
        fill = "#222" if crawled else "#fff"
        parts.append(
            f'<g class="node" data-tag="{esc(node)}"><title>{esc(node)}</title><circle cx="{x}" '
            f'cy="{y}" r="5" fill="{fill}" stroke="#222"/><text x="{x + 9}" y="{y + 4}">'
            f"{esc(_label(node))}</text></g>"
        )
    y = height - LEGEND + 14
    for index, (kind, colour) in enumerate(KIND_COLOURS.items()):
        x = MARGIN + index * 110
        parts.append(
            f'<line x1="{x}" y1="{y}" x2="{x + 24}" y2="{y}" stroke="{colour}" '
            f'stroke-width="2"/><text x="{x + 30}" y="{y + 4}">{kind}</text>'
        )
    note = "● crawled tag · ○ not crawled · dashed: an edge pointing back or within a column"
    if graph.left_out_nodes:
        note += (
            f" · {graph.left_out_nodes} more node(s) and {graph.left_out_edges} edge(s) "
            f"not drawn (at most {MAX_NODES} nodes)"
        )
    parts.append(f'<text class="note" x="{MARGIN}" y="{y + 22}">{esc(note)}</text>')
    return "".join(parts) + "</svg>"


def _label(node: str) -> str:
    return node if len(node) <= LABEL_CHARACTERS else node[: LABEL_CHARACTERS - 1] + "…"


def _edge_path(edge: Edge, position: dict[str, tuple[int, int]]) -> str:
    """A forward edge runs from the end of its source label to the target's dot; one
    pointing back (or within a column) arcs above the rows, dashed."""
    esc = html.escape
    (x1, y1), (x2, y2) = position[edge.from_tag], position[edge.to]
    colour = KIND_COLOURS.get(edge.kind, "#888")
    if x2 > x1:
        start = x1 + 12 + len(_label(edge.from_tag)) * CHARACTER_WIDTH
        middle = (start + x2) / 2
        shape = f"M{start:.0f},{y1} C{middle:.0f},{y1} {middle:.0f},{y2} {x2 - 6},{y2}"
        dash = ""
    elif x2 == x1:
        bulge = x1 - 14 - abs(y2 - y1) / 3
        shape = f"M{x1 - 6},{y1} Q{bulge:.0f},{(y1 + y2) / 2:.0f} {x2 - 6},{y2}"
        dash = ' stroke-dasharray="4 3"'
    else:
        lift = min(y1, y2) - 24 - abs(x1 - x2) / 8
        shape = f"M{x1},{y1 - 6} Q{(x1 + x2) / 2:.0f},{lift:.0f} {x2},{y2 - 6}"
        dash = ' stroke-dasharray="4 3"'
    return (
        f'<path class="edge" data-from="{esc(edge.from_tag)}" data-to="{esc(edge.to)}" '
        f'data-kind="{esc(edge.kind)}" d="{shape}" fill="none" stroke="{colour}" '
        f'stroke-opacity="0.6"{dash}/>'
    )


def caption(graph: TopicGraph) -> str:
    kinds = Counter(edge.kind for edge in graph.edges)
    shown = ", ".join(f"{kinds[kind]} {kind}" for kind in KIND_COLOURS if kinds[kind])
    text = f"{len(graph.crawled)} crawled tag(s) and their edges ({shown})."
    if graph.left_out_nodes:
        text += f" {graph.left_out_nodes} node(s) beyond the first {MAX_NODES} are not drawn."
    return text
