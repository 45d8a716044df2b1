"""The README's commands, how each is run, and what each must have written.

:func:`readme_commands` reads every command of the README's ``bash`` blocks (and each
``python`` block as one command). Each is either in :data:`CHECKS` — run from one scratch
folder, in README order, against the local site (``MEDIUM_BASE_URL``), then its output read
and checked (columns, rows, values: not the exit status alone) — or in :data:`SKIPPED`,
with why it cannot run here and where it is tested instead. ``tests/test_readme.py`` fails
for a command in neither, and for a check no command matches any more.

How a command runs (:func:`run`): ``.venv/bin/scrapy crawl …`` and ``.venv/bin/python -m
topics_crawler …`` in this process (:mod:`tests.in_process`, in the scratch folder,
``-s MEDIUM_BASE_URL=<site> -s RATE_START=0`` added to a crawl: the local site needs no
cautious first contact); anything else (``scrapy parse``, ``python
-c``, a ``python`` block) as a process, ``.venv/bin/`` meaning this interpreter's.
"""

from __future__ import annotations

import ast
import csv
import json
import os
import re
import shlex
import subprocess
import sys
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from tests.in_process import scrapy_crawl, topics_crawler_cli

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
#: A request the local site logged: ``(method, path, status)``.
Logged = tuple[str, str, int]


def readme_commands(text: str) -> list[str]:
    """Each command of the README's ``bash`` blocks (comments dropped, continuations
    joined), and each ``python`` block as one ``<python block>`` command."""
    commands = []
    for language, body in re.findall(r"^```(\w+)\n(.*?)^```", text, flags=re.S | re.M):
        if language == "python":
            commands.append("<python block>\n" + body)
            continue
        if language != "bash":
            continue
        for line in body.replace("\\\n", " ").splitlines():
            command = re.sub(r"\s+#\s.*$", "", line).strip()
            if command and not command.startswith("#"):
                commands.append(re.sub(r"\s+", " ", command))
    return commands


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


def saved(path: str, name: str) -> Callable[[Path, str], None]:
    """A preparation: save the local site's page at ``path`` as ``name`` (a saved page)."""

    def prepare(folder: Path, base_url: str) -> None:
        with urllib.request.urlopen(f"{base_url}{path}", timeout=30) as response:
            (folder / name).write_bytes(response.read())

    return prepare


@dataclass(frozen=True)
class Example:
    """README commands matching ``pattern`` (a regular expression), what must be true of
    what they wrote, and what the folder must hold first (a saved page)."""

    pattern: str
    check: Callable[[Outcome], None]
    prepare: Callable[[Path, str], None] | None = None


def ends(text: str) -> str:
    """The pattern of a command ending with ``text`` (taken as it is)."""
    return re.escape(text) + "$"


def starts(text: str) -> str:
    """The pattern of a command starting with ``text`` (taken as it is)."""
    return "^" + re.escape(text)


TWO_TAGS = "-a tags=distributed-training,machine-learning"
STORY_PAGE = "/@varuntej/a-practical-guide-to-mixed-precision-training-428b2eb74440"
FEEDS_JSON = '-s \'FEEDS={"stories.csv": {"format": "csv", "item_classes": ["topics_crawler'

CHECKS = (
    Example(ends(f"topics {TWO_TAGS} -O out.jsonl"), two_tags),
    Example(ends("-a max_stories=5 -O ml.jsonl"), start_urls_five),
    Example(ends(" -a follow=stories -O stories-only.jsonl"), stories_only),
    Example(ends(" -a follow=none -a cards=stories -O cards.jsonl"), cards_only),
    Example(ends(" -O bodies.jsonl"), bodies),
    Example(ends(" -a access=free -a follow=stories -O free.jsonl"), free_only),
    Example(ends(" -s IMAGES_ENABLED=1 -s DATASET_DIR=data/ml"), images_dataset),
    Example(ends(" markdown data/ml site --layout jekyll"), jekyll_site),
    Example(ends(" -a responses=20 -O out.jsonl"), responses),
    Example(ends(" -a related_depth=2 -a max_tags=30 -a follow=none -O map.jsonl"), topic_map),
    Example(ends(" -a author_stories=50 -O archives.jsonl"), author_archives),
    Example(ends(" -s REPLAY_MODE=record -O first.jsonl"), recorded),
    Example(ends(" -s REPLAY_MODE=replay -O again.jsonl"), replayed),
    Example(ends(f"topics {TWO_TAGS} -s DATASET_DIR=data/dist-training"), dataset),
    Example(ends(" -m topics_crawler report data/dist-training --html"), report),
    Example(starts("<python block>\nimport duckdb\nimport pandas"), shows_authors),
    Example(re.escape("select author_username, count(*) n, sum(claps)"), shows_authors),
    Example(re.escape("pl.read_parquet('data/dist-training/stories.parquet"), shows_years),
    Example(re.escape("select data_source, count(*) n from"), shows_sources),
    Example(re.escape("load_dataset('data/dist-training', 'stories'"), loads_in_datasets),
    Example(re.escape("'data/dist-training/story_stats.parquet"), shows_history),
    Example(re.escape("open('data/dist-training/stories.jsonl')"), counts_the_twin),
    Example(re.escape("['audit']"), shows_the_audit),
    Example(re.escape("'data/dist-training/tag_stories.parquet"), shows_tag_stories),
    Example(ends(" -O 'out/%(item_type)s.parquet:parquet'"), per_type_parquet),
    Example(ends(" -o 'out/%(item_type)s.csv:csv'"), per_type_csv),
    Example(re.escape(FEEDS_JSON), feeds_item_classes),
    Example(ends(" -a source=feed -s DATASET_DIR=data/ml"), feed_run),
    Example(ends("topics -a tags=distributed-training -a history=newest -O out.jsonl"), history),
    Example(ends(" -a since=2025-06 -a max_stories=5 -O top.jsonl"), most_read),
    Example(ends(" -a since=2025-11-16 -a until=2025-11-22 -O week.jsonl"), one_week),
    Example(ends(" -a follow=none -a cards=stories -O listing.jsonl"), listing),
    Example(ends("parse --spider=topics https://medium.com/tag/machine-learning"), parses_tag),
    Example(ends("parse --spider=topics https://medium.com/@varuntej"), parses_author),
    Example(
        starts(".venv/bin/python -m topics_crawler extract saved-story.html --url "),
        extracts_story,
        saved(STORY_PAGE, "saved-story.html"),
    ),
    Example(
        starts(".venv/bin/python -m topics_crawler extract feed.xml --url "),
        extracts_feed,
        saved("/feed/@varuntej", "feed.xml"),
    ),
)

#: Commands not run here: pattern → why, and where they are tested.
SKIPPED = {
    r"^make demo$": "runs the demo: tests/test_site_demo.py::test_the_demo_shows_history_two_"
    "tags_a_report_and_lines_that_run; .ci/run",
    r"^make test$": "runs every test: .ci/run",
    r"^\.venv/bin/pytest ": "runs tests: .ci/run (make test runs every test)",
    r"^pip install ": "installs packages: "
    "tests/test_install.py::test_each_extra_installs_on_its_own",
    r"^make lock$": "rewrites the locks: tests/test_readme.py::test_make_lock_reproduces_the_"
    "committed_locks",
    r"^make (fixtures|bench|fuzz)$": "tooling: rewrites fixtures / runs benchmarks and the full"
    " fuzz run (see BENCHMARKS.md)",
    r"^\.venv/bin/python -m topics_crawler\.site ": "serves the local site: this test serves the "
    "same one itself (topic_graph_site(), on a free port)",
    r"^export MEDIUM_BASE_URL=": "this test gives each crawl its site's address",
    r"^export SCRAPYD_": "needs a Scrapyd: "
    "tests/test_scrapyd.py (credentials from the environment)",
    r"^\.venv/bin/scrapyd-deploy ": "needs a Scrapyd: tests/test_scrapyd.py::egg",
    r"^curl .*schedule\.json": "needs a Scrapyd: tests/test_scrapyd.py (schedule.json)",
    r"^\.venv/bin/scrapyd-client ": "needs a Scrapyd: tests/test_scrapyd.py (ScrapydClient)",
    r"REDIS_URL=": "needs Redis: tests/test_distributed.py (workers on one real Redis)",
    r"^MEDIUM_SID=": "needs your own Medium session: tests/test_access.py::test_a_crawl_takes_one"
    "_kind_and_a_session_shows_members_the_whole_text (a member's session on the local site)",
    r"^topics-crawler (demo|site|crawl|scrapy)\b": "the installed command: tests/test_installed.py"
    " runs each line as written, from a wheel in a clean virtualenv",
    r"^\.venv/bin/scrapy shell ": "interactive: tests/test_debug_commands.py::test_scrapy_shell_"
    "gets_the_response_a_crawl_gets runs it with -c",
}


def example_of(command: str) -> Example | None:
    return next((e for e in CHECKS if re.search(e.pattern, command)), None)


def skip_reason(command: str) -> str | None:
    return next((why for pattern, why in SKIPPED.items() if re.search(pattern, command)), None)


def run(command: str, folder: Path, base_url: str) -> Outcome:
    """Run one README command from ``folder`` against the site at ``base_url``."""
    if command.startswith(".venv/bin/scrapy crawl "):
        arguments = shlex.split(command)[2:]
        local = ("-s", f"MEDIUM_BASE_URL={base_url}", "-s", "RATE_START=0")  # unpaced: our site
        done = scrapy_crawl(*arguments, *local, cwd=folder)
    elif command.startswith(".venv/bin/python -m topics_crawler "):
        done = topics_crawler_cli(*shlex.split(command)[3:], cwd=folder)
    else:
        env = {
            **os.environ,
            "MEDIUM_BASE_URL": base_url,
            "SCRAPY_SETTINGS_MODULE": "topics_crawler.settings",
            "HF_DATASETS_OFFLINE": "1",  # a local dataset; nothing to download
            "HF_HUB_OFFLINE": "1",
        }
        if command.startswith("<python block>"):
            argv = [sys.executable, "-c", command.split("\n", 1)[1]]
        else:
            tools = {"scrapy": f"{shlex.quote(sys.executable)} -m scrapy", "python": sys.executable}
            line = re.sub(r"\.venv/bin/(scrapy|python)\b", lambda m: tools[m.group(1)], command)
            argv = ["bash", "-c", line]
        process = subprocess.run(
            argv, cwd=folder, env=env, stdin=subprocess.DEVNULL, capture_output=True,
            text=True, timeout=300, check=False,
        )  # fmt: skip
        return Outcome(command, process.returncode, process.stdout, process.stderr, folder)
    return Outcome(command, done.returncode, done.stdout, done.stderr, folder)
