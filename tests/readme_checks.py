"""The README's commands, how each is run, and what each must have written.

:func:`readme_commands` reads every command of the README's ``bash`` blocks (and each
``python`` block as one command). Each is either in :data:`CHECKS` — run from one scratch
folder, in README order, against the local site (``MEDIUM_BASE_URL``), then its output read
and checked (columns, rows, values: not the exit status alone) — or in :data:`SKIPPED`,
with why it cannot run here and where it is tested instead. ``tests/test_readme.py`` fails
for a command in neither, and for a check no command matches any more. The checks, and the
:class:`~tests.readme_outputs.Outcome` they read, are in :mod:`tests.readme_outputs`.

How a command runs (:func:`run`): ``.venv/bin/scrapy crawl …`` and ``.venv/bin/python -m
topics_crawler …`` in this process (:mod:`tests.in_process`, in the scratch folder,
``-s MEDIUM_BASE_URL=<site> -s RATE_START=0`` added to a crawl: the local site needs no
cautious first contact); anything else (``scrapy parse``, ``python
-c``, a ``python`` block) as a process, ``.venv/bin/`` meaning this interpreter's.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.in_process import scrapy_crawl, topics_crawler_cli
from tests.readme_outputs import (
    Outcome,
    author_archives,
    bodies,
    cards_only,
    counts_the_twin,
    dataset,
    extracts_feed,
    extracts_story,
    feed_run,
    feeds_item_classes,
    free_only,
    history,
    images_dataset,
    jekyll_site,
    listing,
    loads_in_datasets,
    most_read,
    one_week,
    parses_author,
    parses_tag,
    per_type_csv,
    per_type_parquet,
    recorded,
    replayed,
    report,
    responses,
    shows_authors,
    shows_history,
    shows_sources,
    shows_tag_stories,
    shows_the_audit,
    shows_years,
    start_urls_five,
    stories_only,
    topic_map,
    two_tags,
)

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


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
