"""The report's topic-graph picture: layout from the seeds, the edges drawn, the cap, and a
plain sentence for a dataset without edges."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_dataset import crawl
from tests.test_report import synthetic_stories
from topics_crawler.items import Item, TagEdge, TagPage
from topics_crawler.pages.tag_edges import tag_edges
from topics_crawler.report import build_report
from topics_crawler.report.topic_graph import NO_EDGES, Edge, svg, topic_graph

pytest.importorskip("matplotlib")

GRAPH_PAGES = [
    TagPage(
        tag="ai", url="https://medium.com/tag/ai", related_tags=["ml", "llm"],
        parent_topics=["Technology"], top_writers=[{"username": "Ada", "name": "Ada L."}],
    ),
    TagPage(tag="ml", url="https://medium.com/tag/ml", related_tags=["ai", "statistics"]),
    TagPage(
        tag="statistics", url="https://medium.com/tag/statistics", related_tags=["math"],
        subtopics=[{"name": "Bayesian Methods"}],
    ),
]  # fmt: skip


def drawn_edges(picture: str) -> set[tuple[str, str, str]]:
    return set(re.findall(r'data-from="([^"]+)" data-to="([^"]+)" data-kind="([^"]+)"', picture))


def drawn_nodes(picture: str) -> set[str]:
    return set(re.findall(r'<g class="node" data-tag="([^"]+)"', picture))


def test_layers_follow_hops_from_the_seeds_and_ends_stand_apart() -> None:
    edges = [Edge(e.from_tag, e.to, e.kind) for p in GRAPH_PAGES for e in tag_edges(p)]
    graph = topic_graph(["ai", "ml", "statistics"], edges, seeds=["ai"])
    assert graph is not None
    assert graph.columns == [
        ("seed tags", ["ai"]),
        ("hop 1", ["ml"]),
        ("hop 2", ["statistics"]),
        ("other tags", ["bayesian-methods", "llm", "math", "technology"]),
        ("writers", ["@ada"]),
    ]
    picture = svg(graph)
    assert drawn_edges(picture) == {(e.from_tag, e.to, e.kind) for e in edges}
    assert ("ml", "ai", "related") in drawn_edges(picture)  # the cycle back to the seed
    assert picture == svg(topic_graph(["statistics", "ml", "ai"], edges[::-1], ["ai"]))


def test_more_than_fifty_nodes_are_capped_and_the_picture_says_so() -> None:
    edges = [Edge("hub", f"tag-{n:03d}", "related") for n in range(80)]
    graph = topic_graph(["hub"], edges, seeds=["hub"])
    assert graph is not None
    picture = svg(graph)
    assert len(drawn_nodes(picture)) == 50
    assert "31 more node(s) and 31 edge(s) not drawn (at most 50 nodes)" in picture
    assert topic_graph(["hub"], [], seeds=["hub"]) is None


@pytest.fixture(scope="module")
def datasets(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("graph-report")
    with_edges: list[Item] = [*synthetic_stories(12), *GRAPH_PAGES]
    with_edges += [edge for page in GRAPH_PAGES for edge in tag_edges(page)]
    crawl(root / "with-edges", with_edges, tags="ai")
    crawl(root / "no-edges", [*synthetic_stories(12), TagPage(tag="ai")], tags="ai")
    return root / "with-edges", root / "no-edges"


def test_the_html_report_draws_the_crawled_tags_and_their_edges(
    datasets: tuple[Path, Path], tmp_path: Path
) -> None:
    page = build_report(datasets[0], tmp_path / "html", fmt="html").read_text("utf-8")
    assert "<h2>Topic graph</h2>" in page
    picture = page[page.index("<svg") : page.index("</svg>")]
    assert drawn_nodes(picture) == {
        "ai", "ml", "statistics", "llm", "math", "technology", "bayesian-methods", "@ada",
    }  # fmt: skip
    expected = {(e.from_tag, e.to, e.kind) for p in GRAPH_PAGES for e in tag_edges(p)}
    assert drawn_edges(picture) == expected
    assert {kind for *_ends, kind in expected} == {"related", "parent", "subtopic", "writer"}
    assert "3 crawled tag(s)" in page
    assert "http" not in picture.replace("http://www.w3.org/2000/svg", "")  # nothing fetched


def test_the_markdown_report_links_the_svg_beside_it(
    datasets: tuple[Path, Path], tmp_path: Path
) -> None:
    report = build_report(datasets[0], tmp_path / "md")
    assert "![Topic graph](topic_graph.svg)" in report.read_text("utf-8")
    assert drawn_edges((tmp_path / "md" / "topic_graph.svg").read_text("utf-8"))


def test_a_dataset_without_edges_gets_a_plain_sentence(
    datasets: tuple[Path, Path], tmp_path: Path
) -> None:
    page = build_report(datasets[1], tmp_path / "html", fmt="html").read_text("utf-8")
    assert NO_EDGES in page
    assert "<svg" not in page
    report = build_report(datasets[1], tmp_path / "md").read_text("utf-8")
    assert NO_EDGES in report
    assert not (tmp_path / "md" / "topic_graph.svg").exists()


def test_tag_edge_rows_are_what_the_graph_reads() -> None:
    assert all(isinstance(edge, TagEdge) for edge in tag_edges(GRAPH_PAGES[0]))


def test_hops_follow_related_edges_first_as_the_walk_does() -> None:
    edges = [Edge("a", "c", "parent"), Edge("a", "b", "related"), Edge("b", "c", "related")]
    graph = topic_graph(["a", "b", "c", "d"], [*edges, Edge("d", "a", "parent")], seeds=["a"])
    assert graph is not None
    assert graph.columns == [("seed tags", ["a", "d"]), ("hop 1", ["b"]), ("hop 2", ["c"])]
