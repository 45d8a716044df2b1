"""What each README command must have written: its outcome (exit status, output, the folder
it ran in, the requests the local site answered) and the checks of it, in README order
(columns, rows, values: not the exit status alone). :data:`tests.readme_checks.CHECKS` says
which command each check is for."""

from __future__ import annotations

import ast
import csv
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

#: A request the local site logged: ``(method, path, status)``.
Logged = tuple[str, str, int]


@dataclass
class Outcome:
    """What a command did: its exit status and output, the folder it ran in, the requests
    the local site answered meanwhile."""

    command: str
    returncode: int
    stdout: str
    stderr: str
    folder: Path
    requests: list[Logged] = field(default_factory=list)

    def rows(self, name: str) -> list[dict[str, Any]]:
        """The records of a JSON lines file, a Parquet file or a folder of Parquet parts."""
        path = self.folder / name
        if path.suffix == ".parquet":
            return pq.read_table(path).to_pylist()
        return [json.loads(line) for line in path.read_text("utf-8").splitlines()]

    def of_type(self, name: str, item_type: str) -> list[dict[str, Any]]:
        return [row for row in self.rows(name) if row["item_type"] == item_type]

    def types(self, name: str) -> Counter[str]:
        return Counter(row["item_type"] for row in self.rows(name))


def filled(rows: list[dict[str, Any]], *names: str) -> None:
    """Every row has a value in each of ``names``."""
    assert rows, "no rows"
    for row in rows:
        empty = [name for name in names if row.get(name) in (None, "", [])]
        assert not empty, f"{empty} empty in {row}"


def printed_items(stdout: str) -> list[dict[str, Any]]:
    """The items ``scrapy parse`` prints (a pprint of dicts under ``# Scraped Items``)."""
    section = stdout.split("# Scraped Items", 1)[1].split("\n", 1)[1]
    return list(ast.literal_eval(section.split("# Requests", 1)[0].strip()))


# --- the checks, in README order -----------------------------------------------------

STORY_COLUMNS = ("story_id", "title", "author_username", "published_at", "text")


def two_tags(run: Outcome) -> None:
    types = run.types("out.jsonl")
    assert set(types) == {"tag_page", "tag_edge", "story", "tag_story", "author", "publication"}
    pages = run.of_type("out.jsonl", "tag_page")
    assert {page["tag"] for page in pages} == {"distributed-training", "machine-learning"}
    listed = run.of_type("out.jsonl", "tag_story")
    assert {(row["tag"], row["source"]) for row in listed} == {
        ("distributed-training", "section"), ("machine-learning", "section")
    }  # fmt: skip
    filled(run.of_type("out.jsonl", "story"), *STORY_COLUMNS)
    filled(run.of_type("out.jsonl", "author"), "username", "name")


def start_urls_five(run: Outcome) -> None:
    assert [page["tag"] for page in run.of_type("ml.jsonl", "tag_page")] == ["machine-learning"]
    stories = run.of_type("ml.jsonl", "story")
    assert len(stories) == 5
    filled(stories, *STORY_COLUMNS)


def stories_only(run: Outcome) -> None:
    assert set(run.types("stories-only.jsonl")) == {"tag_page", "tag_edge", "story", "tag_story"}
    filled(run.of_type("stories-only.jsonl", "story"), *STORY_COLUMNS)
    assert not any(path.startswith("/@") and path.count("/") == 1 for _, path, _ in run.requests)


def cards_only(run: Outcome) -> None:
    assert set(run.types("cards.jsonl")) == {"tag_page", "tag_edge", "story", "tag_story"}
    stories = run.of_type("cards.jsonl", "story")
    filled(stories, "story_id", "title", "author_name")
    assert all("card" in story["data_source"] for story in stories)
    assert {path for _, path, _ in run.requests} == {"/robots.txt", "/tag/machine-learning"}


def bodies(run: Outcome) -> None:
    stories = run.of_type("bodies.jsonl", "story")
    assert len(stories) == 5
    filled(stories, "markdown", "text")


def free_only(run: Outcome) -> None:
    stories = run.of_type("free.jsonl", "story")
    filled(stories, *STORY_COLUMNS)
    assert {(s["is_member_only"], s["access"]) for s in stories} == {(False, "full")}


def images_dataset(run: Outcome) -> None:
    stories = run.rows("data/ml/stories.parquet")
    stored = [image for story in stories for image in story["images"] or [] if image["path"]]
    assert stored, "no story image stored"
    assert all((run.folder / "data/ml" / image["path"]).is_file() for image in stored)
    assert list((run.folder / "data/ml/images/full").glob("*.jpg"))


def jekyll_site(run: Outcome) -> None:
    posts = sorted((run.folder / "site/_posts").glob("*.md"))
    with_body = [s for s in run.rows("data/ml/stories.parquet") if s["markdown"]]
    assert len(posts) + len(list((run.folder / "site/_drafts").glob("*.md"))) == len(with_body)
    titles = {s["title"] for s in with_body}
    for post in posts:
        front = post.read_text("utf-8").split("---\n")[1]
        assert any(f"title: {json.dumps(t, ensure_ascii=False)}\n" in front for t in titles), front


def responses(run: Outcome) -> None:
    rows = run.of_type("out.jsonl", "response")
    filled(rows, "response_id", "story_id", "author_username", "text")
    stories = {story["story_id"] for story in run.of_type("out.jsonl", "story")}
    assert {row["story_id"] for row in rows} <= stories


def topic_map(run: Outcome) -> None:
    assert set(run.types("map.jsonl")) == {"tag_page", "tag_edge"}
    crawled = {page["tag"] for page in run.of_type("map.jsonl", "tag_page")}
    assert len(crawled) >= 5, crawled  # the seed and the tags up to two hops from it
    edges = run.of_type("map.jsonl", "tag_edge")
    filled(edges, "from_tag", "to", "kind")
    assert {edge["from_tag"] for edge in edges} == crawled


def author_archives(run: Outcome) -> None:
    page = run.of_type("archives.jsonl", "tag_page")[0]
    listed = {i for ids in page["sections"].values() for i in ids}
    stories = run.of_type("archives.jsonl", "story")
    filled(stories, *STORY_COLUMNS)
    assert len(stories) > len(listed), "the authors' archives add stories"


def recorded(run: Outcome) -> None:
    filled(run.of_type("first.jsonl", "story"), *STORY_COLUMNS)
    assert any((run.folder / ".scrapy/replay").rglob("*")), "no response stored"


def replayed(run: Outcome) -> None:
    assert run.requests == [], "replay fetched something"
    again = {s["story_id"]: s["title"] for s in run.of_type("again.jsonl", "story")}
    first = {s["story_id"]: s["title"] for s in run.of_type("first.jsonl", "story")}
    assert again == first


def dataset(run: Outcome) -> None:
    stories = run.rows("data/dist-training/stories.parquet")
    filled(stories, *STORY_COLUMNS)
    manifest = json.loads((run.folder / "data/dist-training/manifest.json").read_text("utf-8"))
    assert manifest["counts"]["story"] == len(stories), manifest["counts"]


def report(run: Outcome) -> None:
    page = (run.folder / "data/dist-training/report/report.html").read_text("utf-8")
    assert "distributed-training" in page
    assert "machine-learning" in page


def dataset_stories(run: Outcome) -> list[dict[str, Any]]:
    return run.rows("data/dist-training/stories.parquet")


def shows_authors(run: Outcome) -> None:
    names = {s["author_name"] for s in dataset_stories(run)} | {
        s["author_username"] for s in dataset_stories(run)
    }
    assert any(name in run.stdout for name in names), run.stdout


def shows_years(run: Outcome) -> None:
    years = {str(s["published_at"].year) for s in dataset_stories(run)}
    assert all(year in run.stdout for year in years), run.stdout


def shows_sources(run: Outcome) -> None:
    sources = {s["data_source"] for s in dataset_stories(run)}
    assert all(source in run.stdout for source in sources), run.stdout


def loads_in_datasets(run: Outcome) -> None:
    assert f"num_rows: {len(dataset_stories(run))}" in run.stdout, run.stdout
    assert "title" in run.stdout


def shows_history(run: Outcome) -> None:
    assert "scraped_at" in run.stdout
    assert all(s["story_id"] in run.stdout for s in dataset_stories(run)[:3]), run.stdout


def counts_the_twin(run: Outcome) -> None:
    assert run.stdout.strip() == f"{len(dataset_stories(run))} stories"


def shows_tag_stories(run: Outcome) -> None:
    listed = run.rows("data/dist-training/tag_stories.parquet")
    assert {row["source"] for row in listed} == {"section"}  # the tag pages' sections
    for tag in ("distributed-training", "machine-learning"):
        assert tag in run.stdout, run.stdout
    assert "section" in run.stdout, run.stdout


def shows_the_audit(run: Outcome) -> None:
    for tag in ("distributed-training", "machine-learning"):
        assert f"('{tag}', " in run.stdout, run.stdout


def per_type_parquet(run: Outcome) -> None:
    stories = pq.read_table(run.folder / "out/story.parquet")
    assert "username" not in stories.column_names, "the story schema alone"
    filled(stories.to_pylist(), *STORY_COLUMNS)
    for item_type in ("story", "author", "publication", "tag_page", "tag_edge", "tag_story"):
        rows = run.rows(f"out/{item_type}.parquet")
        assert {row["item_type"] for row in rows} == {item_type}


def per_type_csv(run: Outcome) -> None:
    with (run.folder / "out/story.csv").open(newline="", encoding="utf-8") as file:
        stories = list(csv.DictReader(file))
    assert {row["item_type"] for row in stories} == {"story"}
    filled(stories, *STORY_COLUMNS)
    with (run.folder / "out/author.csv").open(newline="", encoding="utf-8") as file:
        filled(list(csv.DictReader(file)), "username", "name")


def feeds_item_classes(run: Outcome) -> None:
    with (run.folder / "stories.csv").open(newline="", encoding="utf-8") as file:
        stories = list(csv.DictReader(file))
    assert {row["item_type"] for row in stories} == {"story"}
    filled(stories, *STORY_COLUMNS)


def feed_run(run: Outcome) -> None:
    """The dataset has every story the feed lists: one request for the feed, no story page."""
    paths = [path for _, path, _ in run.requests]
    assert "/feed/tag/machine-learning" in paths
    assert not [path for path in paths if re.search(r"-[0-9a-f]{12}$", path)], paths
    assert run.rows("data/ml/stories.parquet")


def history(run: Outcome) -> None:
    stories = run.of_type("out.jsonl", "story")
    filled(stories, *STORY_COLUMNS)
    assert run.of_type("out.jsonl", "tag_page")[0]["tag"] == "distributed-training"
    assert any(method == "POST" and "graphql" in path for method, path, _ in run.requests)


def most_read(run: Outcome) -> None:
    """The most clapped of each month from the newest back (the ranges ``since`` walks)."""
    stories = run.of_type("top.jsonl", "story")
    assert len(stories) == 5
    filled(stories, *STORY_COLUMNS)
    assert all(story["published_at"] >= "2025-06" for story in stories)
    assert any(method == "POST" and "graphql" in path for method, path, _ in run.requests)


def one_week(run: Outcome) -> None:
    stories = run.of_type("week.jsonl", "story")
    filled(stories, *STORY_COLUMNS)
    assert all("2025-11-16" <= story["published_at"][:10] <= "2025-11-22" for story in stories)


def listing(run: Outcome) -> None:
    assert set(run.types("listing.jsonl")) == {"tag_page", "tag_edge", "story", "tag_story"}
    stories = run.of_type("listing.jsonl", "story")
    filled(stories, "story_id", "title", "published_at")
    listed = [r for r in run.of_type("listing.jsonl", "tag_story") if r["source"] == "history"]
    assert sorted(r["rank"] for r in listed) == list(range(1, len(stories) + 1))
    assert not any(story["text"] for story in stories), "no story page was fetched"


def parses_tag(run: Outcome) -> None:
    pages = [i for i in printed_items(run.stdout) if i["item_type"] == "tag_page"]
    assert [page["tag"] for page in pages] == ["machine-learning"]


def parses_author(run: Outcome) -> None:
    assert printed_items(run.stdout)[0]["username"] == "varuntej"


def extracts_story(run: Outcome) -> None:
    items = [json.loads(line) for line in run.stdout.splitlines()]
    stories = [item for item in items if item["item_type"] == "story"]
    assert [story["story_id"] for story in stories] == ["428b2eb74440"]
    filled(stories, *STORY_COLUMNS)


def extracts_feed(run: Outcome) -> None:
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    stories = [line for line in lines if line.get("item_type") == "story"]
    filled(stories, "story_id", "title")
    assert {story["author_username"] for story in stories} == {"varuntej"}
