"""The package as a user installs it: a wheel in a clean virtualenv, run from a folder outside
the repository, with no environment variable of the project.

The wheel is built from an sdist of the working tree (``uv build``); the virtualenv gets the
runtime lock (``requirements-runtime.txt``) and the wheel without dependencies: what
``pip install topics_crawler`` gives, at the lock's versions (uv's cache makes it fast; it
asks the package registry only for what the cache lacks). Every command runs with
``PATH``, ``HOME`` and the locale alone in its environment; each test checks the data the
command wrote. The README's ``topics-crawler`` lines (its "Installed" section) are run as
written, the local site's port 8000 replaced by a free one.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
import zipfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.services import free_port, stop_process
from tests.test_readme import readme_commands
from topics_crawler.site import demo
from topics_crawler.site.content import default_site, expected_entities

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text("utf-8")
SECTION = README.split("### Installed: the `topics-crawler` command", 1)[1].split("\n## ", 1)[0]
#: The section's ``topics-crawler`` lines by command: ``{"demo": "topics-crawler demo", …}``.
QUICK_START = {
    line.split()[1]: line for line in readme_commands(SECTION) if line.startswith("topics-crawler ")
}
README_PORT = "8000"
PORT = str(free_port())
UV = Path(sys.executable).with_name("uv")
TAGS = ("distributed-training", "machine-learning")  # as tests/test_crawl.py
KEYS = {"tag_page": "tag", "story": "story_id", "author": "username", "publication": "slug"}
GROUPS = {
    "tag_page": "tag_pages", "story": "stories", "author": "authors", "publication": "publications",
}  # fmt: skip

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@dataclass
class Installed:
    """A clean virtualenv holding the wheel; commands run in ``home``, outside the repo."""

    wheel: Path
    venv: Path
    home: Path

    @property
    def env(self) -> dict[str, str]:
        return {
            "PATH": f"{self.venv / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin",
            "HOME": os.environ.get("HOME", str(self.home)),
            "LANG": "C.UTF-8",
        }

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(args), cwd=self.home, env=self.env, capture_output=True, text=True,
            timeout=timeout, check=False,
        )  # fmt: skip

    def uv_pip(self, *args: str) -> None:
        process = subprocess.run(
            [str(UV), "pip", "install", "--quiet", "--python", str(self.venv / "bin/python"),
             *args],
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert process.returncode == 0, process.stderr[-3000:]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("installed")
    build = subprocess.run(
        [str(UV), "build", "--quiet", "--out-dir", str(base / "dist"), str(ROOT)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr[-3000:]
    (wheel,) = (base / "dist").glob("*.whl")
    venv = base / "venv"
    made = subprocess.run(
        [str(UV), "venv", "--quiet", "--python", sys.executable, str(venv)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    home = base / "home"
    home.mkdir()
    env = Installed(wheel, venv, home)
    env.uv_pip("-r", str(ROOT / "requirements-runtime.txt"))
    env.uv_pip("--no-deps", str(wheel))
    return env


@pytest.fixture(scope="module")
def local_site(installed: Installed) -> Iterator[str]:
    """The README's ``topics-crawler site`` line; yields the site's base URL (its first line)."""
    log = installed.home.parent / "site.log"
    with (
        log.open("w") as errors,
        subprocess.Popen(
            readme_line("site"), cwd=installed.home, env=installed.env,
            stdout=subprocess.PIPE, stderr=errors, text=True,
        ) as process,
    ):  # fmt: skip
        try:
            assert process.stdout is not None
            base_url = process.stdout.readline().strip()
            assert base_url == f"http://127.0.0.1:{PORT}", log.read_text("utf-8")
            yield base_url
        finally:
            stop_process(process)  # type: ignore[arg-type]  # text mode, the same calls


def readme_line(command: str) -> list[str]:
    """The README's ``topics-crawler <command>`` line as words, on this test's port."""
    return shlex.split(QUICK_START[command].replace(README_PORT, PORT))


def readme_default(setting: str) -> str:
    """The default the README's settings table gives ``setting``."""
    found = re.search(rf"^\| `{setting}` \|.*\| `([^`]+)` \|$", README, flags=re.M)
    assert found is not None, f"README has no row for {setting}"
    return found.group(1)


def test_the_wheel_holds_the_package_the_local_site_and_the_console_script(
    installed: Installed,
) -> None:
    with zipfile.ZipFile(installed.wheel) as archive:
        names = archive.namelist()
        entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        scripts = archive.read(entry_points).decode()
    assert {"topics_crawler/site/medium-schema.graphql", "topics_crawler/site/MARKUP.md"} <= set(
        names
    )
    assert "topics-crawler = topics_crawler.cli:main" in scripts
    assert not [n for n in names if n.startswith(("tests/", "bench/", "scripts/"))]
    where = installed.run("python", "-c", "import topics_crawler; print(topics_crawler.__file__)")
    assert where.stdout.startswith(str(installed.venv)), where  # not the repository's copy


def test_the_readme_settings_line_prints_the_readme_default(installed: Installed) -> None:
    words = readme_line("scrapy")
    assert words[-3:] == ["settings", "--get", "RATE_START"]
    process = installed.run(*words)
    assert process.returncode == 0, process.stderr
    value = process.stdout.strip()
    assert value == readme_default("RATE_START")
    assert f"--get RATE_START    # any Scrapy command: prints {value}" in SECTION


def test_a_bad_argument_is_one_line_and_exit_status_2(installed: Installed) -> None:
    process = installed.run("topics-crawler", "crawl", "-a", "tags=ai", "-a", "max_stories=ten")
    assert process.returncode == 2
    assert process.stderr.splitlines() == [
        "topics-crawler crawl: error: max_stories: 'ten' is not a whole number"
    ]
    assert list(installed.home.iterdir()) == []


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def test_the_readme_crawl_line_writes_the_tag_its_stories_and_their_people(
    installed: Installed, local_site: str
) -> None:
    words = readme_line("crawl")
    process = installed.run(*words)
    assert process.returncode == 0, process.stderr[-3000:]
    rows = rows_of(installed.home / words[words.index("-O") + 1])
    site = default_site()
    tag = site.tags["machine-learning"]
    assert [row["tag"] for row in rows if row["item_type"] == "tag_page"] == [tag.slug]
    listed = set(tag.listed())
    every = expected_entities(site, [tag.slug])["stories"]
    stories = {row["story_id"]: row for row in rows if row["item_type"] == "story"}
    assert set(stories) == listed
    for story_id in listed:  # each listed story from its own page, with its values
        values = every[story_id]
        assert {k: stories[story_id].get(k) for k in values} == values, story_id
        assert stories[story_id]["text"], story_id
    authors = {row["username"] for row in rows if row["item_type"] == "author"}
    assert {site.stories[i].author for i in listed} <= authors


def test_an_installed_crawl_of_two_tags_writes_every_entity_once(
    installed: Installed, local_site: str
) -> None:
    process = installed.run(
        "topics-crawler", "crawl", "topics", "-a", f"tags={','.join(TAGS)}",
        "-s", f"MEDIUM_BASE_URL={local_site}", "-s", "LOG_LEVEL=WARNING", "-O", "two.jsonl",
    )  # fmt: skip
    assert process.returncode == 0, process.stderr[-3000:]
    rows = rows_of(installed.home / "two.jsonl")
    expected = expected_entities(default_site(), TAGS)
    for item_type, key in KEYS.items():
        found = Counter(row[key] for row in rows if row["item_type"] == item_type)
        assert set(found) == set(expected[GROUPS[item_type]]), item_type
        assert max(found.values()) == 1, f"{item_type} exported twice"
    stories = {row["story_id"]: row for row in rows if row["item_type"] == "story"}
    for story_id, values in expected["stories"].items():
        assert {k: stories[story_id].get(k) for k in values} == values, story_id
    assert {row["item_type"] for row in rows} <= {*KEYS, "tag_edge", "tag_story"}


def test_the_readme_demo_line_writes_its_dataset_and_lines_that_run(installed: Installed) -> None:
    started = time.monotonic()
    process = installed.run(*readme_line("demo"), timeout=600)
    took = time.monotonic() - started
    assert process.returncode == 0, process.stderr[-3000:]
    out = installed.home / "data" / "demo"  # the README: "into ./data/demo/"
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    assert [run["tags"] for run in manifest["runs"]] == [[demo.SEED_TAG], [demo.SECOND_TAG]]
    stories = pq.read_table(out / "stories.parquet")
    assert stories.num_rows == manifest["counts"]["story"] >= demo.ARCHIVE_STORIES
    assert {"story_id", "title", "author_username", "claps", "text"} <= set(stories.column_names)
    assert stories.column("title").null_count == 0
    assert pq.read_table(out / "tag_pages.parquet").num_rows == 2
    # The base install has no report extra: the demo says how to get it, and its pyarrow
    # line runs as printed.
    *_, pyarrow_line, hint = process.stdout.strip().splitlines()
    assert hint.startswith(f"The report, DuckDB and pandas: {demo.REPORT_EXTRA}")
    words = shlex.split(pyarrow_line)
    pasted = installed.run(*words)
    assert pasted.returncode == 0, pasted.stderr
    assert pasted.stdout.startswith(f"{stories.num_rows} stories:")
    print(f"\ninstalled demo: {took:.1f} s wall")


def test_the_report_extra_adds_the_report(installed: Installed) -> None:
    """``pip install 'topics_crawler[report]'`` on top: the demo's dataset gets its report."""
    if not (installed.home / "data" / "demo" / "manifest.json").is_file():
        pytest.skip("needs the demo's dataset (the test before)")
    installed.uv_pip(
        "--constraint",
        str(ROOT / "requirements.txt"),
        f"topics_crawler[report] @ {installed.wheel.as_uri()}",
    )
    process = installed.run("topics-crawler", "report", "data/demo", "--html", timeout=300)
    assert process.returncode == 0, process.stderr[-3000:]
    page = Path(installed.home / process.stdout.strip())
    assert page.name == "report.html"
    assert demo.SEED_TAG in page.read_text("utf-8")
