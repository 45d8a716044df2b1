"""``topics-crawler markdown``: one file per story with YAML front matter, as Hugo and Jekyll
take it; read back with a YAML parser and a CommonMark parser, never by string matching alone."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.crawl_helpers import crawl_in_process
from tests.markdown_readback import read_back
from topics_crawler.cli import main
from topics_crawler.output.markdown_files import (
    LAYOUTS,
    STATE_NAME,
    export_stories,
    front_matter,
    story_path,
    story_text,
    yaml_value,
)
from topics_crawler.pages.markdown import PREVIEW_NOTICE
from topics_crawler.site.content import default_site
from topics_crawler.site.images import BROKEN_IMAGE_ID, HUGE_IMAGE_ID, WHITEBOARD_ID
from topics_crawler.site.server import SiteServer

MIRO = "https://miro.medium.com/v2/resize:fit:1400/"
#: Jekyll's own rule for a post's file name (jekyll/lib/jekyll/document.rb, DATE_FILENAME_MATCHER).
JEKYLL_POST = re.compile(r"^(?:.+/)*(\d{2,4}-\d{1,2}-\d{1,2})-(.*)(\.[^.]+)$")


def split_file(text: str) -> tuple[dict[str, Any], str]:
    """Front matter (parsed with PyYAML, a YAML 1.1 parser as Jekyll's) and body of a file
    as both generators split it: a ``---`` first line, the block, a ``---`` line."""
    assert text.startswith("---\n")
    head, _, body = text[4:].partition("\n---\n")
    matter = yaml.safe_load(head)
    assert isinstance(matter, dict)
    return matter, body


def a_story(**values: Any) -> dict[str, Any]:
    story = {
        "story_id": "0123456789ab",
        "url": "https://medium.com/@ada/notes-on-shards-0123456789ab",
        "title": "Notes on shards",
        "subtitle": "What a shard costs",
        "author_username": "ada",
        "author_name": "Ada L.",
        "publication_name": None,
        "published_at": "2025-11-03T08:15:00Z",
        "updated_at": "2025-11-04T10:00:00Z",
        "tags": ["distributed-training", "gpu"],
        "claps": 1200,
        "scraped_at": "2026-01-05T12:00:00Z",
        "is_member_only": False,
        "access": "full",
        "preview_share": None,
        "markdown": f"First.\n\n![a figure]({MIRO}1*a.png)\n*caption*\n\nLast.",
        "images": [],
    }
    return story | values


@pytest.mark.parametrize(
    "text",
    [
        'He said "no": yes # not a comment',
        "- starts like a list",
        "@handle, *star*, &anchor, !tag, %directive, `tick`, [flow], {map}, |, >",
        "yes",
        "null",
        "123",
        "2025-11-03",
        "tab\there, back\\slash, new\nline",
        "line\u2028separator, next\u0085line, bom\ufeff, del\x7f, bell\x07",
        "émoji 🚀 and 中文",
        "",
    ],
)
def test_a_yaml_value_reads_back_as_the_same_text(text: str) -> None:
    assert yaml.safe_load(f"key: {yaml_value(text)}") == {"key": text}


def test_front_matter_reads_back_with_its_types() -> None:
    matter, _ = split_file(front_matter(a_story(publication_name="Tensor: Beat")) + "body")
    assert matter == {
        "title": "Notes on shards",
        "slug": "notes-on-shards-0123456789ab",
        "subtitle": "What a shard costs",
        "description": "What a shard costs",
        "author": "Ada L.",
        "author_username": "ada",
        "publication": "Tensor: Beat",
        "date": datetime(2025, 11, 3, 8, 15, tzinfo=UTC),
        "lastmod": datetime(2025, 11, 4, 10, 0, tzinfo=UTC),
        "last_modified_at": datetime(2025, 11, 4, 10, 0, tzinfo=UTC),
        "tags": ["distributed-training", "gpu"],
        "canonical_url": "https://medium.com/@ada/notes-on-shards-0123456789ab",
        "claps": 1200,
        "claps_as_of": datetime(2026, 1, 5, 12, 0, tzinfo=UTC),
        "member_only": False,
        "access": "full",
        "medium_id": "0123456789ab",
    }


def test_figures_point_at_the_stored_copies_and_the_rest_stays_on_medium() -> None:
    story = a_story(
        markdown=f"![a]({MIRO}1*a.png)\n\nText.\n\n![b]({MIRO}1*b\\(1\\).png)\n\n"
        f"```\n![code]({MIRO}1*a.png)\n```",
        images=[
            {"role": "body", "url": f"{MIRO}1*a.png", "path": "images/full/aa.jpg"},
            {"role": "body", "url": f"{MIRO}1*b(1).png", "path": None, "failure": "too_large"},
        ],
    )
    _, body = split_file(story_text(story))
    seen = read_back(body)
    assert seen.images == [("/images/full/aa.jpg", "a"), (f"{MIRO}1*b(1).png", "b")]
    assert seen.code_blocks == [("", f"![code]({MIRO}1*a.png)\n")]  # code byte for byte


def test_file_names_are_the_ones_jekyll_and_hugo_take() -> None:
    jekyll, hugo = LAYOUTS["jekyll"], LAYOUTS["hugo"]
    dated = story_path(a_story(), jekyll)
    assert dated == "_posts/2025-11-03-notes-on-shards-0123456789ab.md"
    assert JEKYLL_POST.match(dated)
    assert story_path(a_story(published_at=None), jekyll) == (
        "_drafts/notes-on-shards-0123456789ab.md"  # Jekyll's posts need a date
    )
    assert story_path(a_story(), hugo) == "content/posts/2025-11-03-notes-on-shards-0123456789ab.md"
    odd = a_story(url=None, title="Ünïcode & Co.: 50% off!")
    assert story_path(odd, hugo) == "content/posts/2025-11-03-n-code-co-50-off-0123456789ab.md"


def test_a_second_export_rewrites_only_what_changed(tmp_path: Path) -> None:
    stories = [
        a_story(),
        a_story(story_id="ba9876543210", url=None, title="Second", claps=5),
        a_story(story_id="cccccccccccc", markdown=None),  # a card: no body
    ]
    layout = LAYOUTS["jekyll"]
    first = export_stories(stories, tmp_path, tmp_path / "site", layout)
    assert (len(first.written), first.unchanged, first.without_body) == (2, 0, 1)
    files = sorted((tmp_path / "site").rglob("*.md"))
    times = {path: path.stat().st_mtime_ns for path in files}
    assert export_stories(stories, tmp_path, tmp_path / "site", layout).written == []
    assert {path: path.stat().st_mtime_ns for path in files} == times

    stories[1] = stories[1] | {"claps": 6}
    stories[0] = stories[0] | {"url": "https://medium.com/@ada/renamed-0123456789ab"}
    third = export_stories(stories, tmp_path, tmp_path / "site", layout)
    assert sorted(third.written) == [
        "_posts/2025-11-03-renamed-0123456789ab.md",
        "_posts/2025-11-03-second-ba9876543210.md",
    ]
    assert third.removed == ["_posts/2025-11-03-notes-on-shards-0123456789ab.md"]
    assert not (tmp_path / "site" / third.removed[0]).exists()
    matter, _ = split_file((tmp_path / "site" / third.written[1]).read_text())
    assert matter["claps"] == 6

    (tmp_path / "site" / STATE_NAME).unlink()  # the state lost: files compared byte for byte
    assert export_stories(stories, tmp_path, tmp_path / "site", layout).written == []


# --- end to end on the local site ------------------------------------------------------------


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("markdown")
    dataset = out / "dataset"
    with SiteServer(default_site()) as site:
        run = crawl_in_process(
            site.base_url,
            out,
            "tags=machine-learning",
            "follow=stories",
            settings={"IMAGES_ENABLED": 1, "DATASET_DIR": dataset},
        )
    assert run.returncode == 0, run.log[-3000:]
    stories = {s["story_id"]: s for s in run.of_type("story")}
    return dataset, out / "site", stories


@pytest.mark.integration
@pytest.mark.parametrize("layout", ["hugo", "jekyll"])
def test_a_crawled_dataset_becomes_a_site_with_its_images(
    exported, layout: str, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset, site_dir, stories = exported
    out = site_dir / layout
    assert main(["markdown", str(dataset), str(out), "--layout", layout]) == 0
    assert f"{len(stories)} stories: {len(stories)} written" in capsys.readouterr().out
    static = out / LAYOUTS[layout].static
    files = sorted(out.rglob("*.md"))
    assert len(files) == len(stories)
    srcs = []
    for path in files:
        matter, body = split_file(path.read_text("utf-8"))
        story = stories[matter["medium_id"]]
        assert matter["title"] == story["title"]
        assert matter["canonical_url"] == story["url"]
        assert matter["claps"] == story["claps"]
        assert matter["member_only"] is story["is_member_only"]
        assert matter["access"] == story["access"]
        assert matter.get("preview_share") == story["preview_share"]
        assert matter["tags"] == story["tags"]
        assert isinstance(matter["date"], datetime)
        seen = read_back(body)
        assert len(seen.images) == len(re.findall(r"^!\[", story["markdown"], flags=re.M))
        for src, _ in seen.images:
            srcs.append(src)
            if src.startswith("/images/"):
                assert (static / src.lstrip("/")).is_file()
        if story["is_member_only"]:
            assert body.rstrip().endswith(PREVIEW_NOTICE)
    local = [src for src in srcs if src.startswith("/images/")]
    remote = [src for src in srcs if not src.startswith("/images/")]
    assert sorted(src.rsplit("/", 1)[-1] for src in remote) == sorted(
        [BROKEN_IMAGE_ID, HUGE_IMAGE_ID]
    )  # not stored: the figure keeps its Medium URL
    assert len(local) > len(set(local))  # the shared image, copied once
    assert any(WHITEBOARD_ID in s["markdown"] for s in stories.values())
    state = json.loads((out / STATE_NAME).read_text())
    assert set(state) == set(stories)
    assert main(["markdown", str(dataset), str(out), "--layout", layout]) == 0
    assert f"0 written, {len(stories)} unchanged" in capsys.readouterr().out


@pytest.mark.integration
def test_a_directory_that_is_no_dataset_is_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["markdown", str(tmp_path), str(tmp_path / "site")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert "is not a dataset (no manifest.json)" in error
