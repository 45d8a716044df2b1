"""A profile's stories from its state: the real 2022 profile with its cards removed, and
the paging cursor it gives."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import lxml.html
import pytest

from tests.fixture_cases import FIXTURES
from topics_crawler.items import Author, Story
from topics_crawler.pages import parse_page

AUSTIN = "author_austinlchurch__lstsk-medium-api-2022-prettified.html"
AUSTIN_URL = "https://austinlchurch.medium.com/"


def without_cards(html: str) -> str:
    """The page with every ``<article>`` (its story cards) taken out of the DOM."""
    tree = lxml.html.fromstring(html)
    for article in tree.xpath("//article"):
        article.drop_tree()
    return lxml.html.tostring(tree, encoding="unicode", doctype="<!DOCTYPE html>")


@pytest.fixture
def austin(real_pages: Path) -> str:
    return (real_pages / AUSTIN).read_text(encoding="utf-8")


@pytest.mark.real_pages
def test_state_alone_lists_the_profiles_ten_stories(austin: str, frozen_now: datetime) -> None:
    stripped = without_cards(austin)
    assert "<article" not in stripped
    full = parse_page(austin, AUSTIN_URL, kind="author", scraped_at=frozen_now)
    bare = parse_page(stripped, AUSTIN_URL, kind="author", scraped_at=frozen_now)
    assert bare.errors == []
    author = bare.items[0]
    assert isinstance(author, Author)
    assert author.username == "austinlchurch"
    stories = bare.items_of("story")
    assert len(stories) == 10
    assert [s.story_id for s in stories] == [s.story_id for s in full.items_of("story")]
    for story in stories:
        assert isinstance(story, Story)
        assert story.title
        assert story.url
        assert story.published_at
        assert story.author_id == "bae46700581e"
    assert [ln.key for ln in bare.links_of("story")] == [s.story_id for s in stories]
    [cursor] = bare.cursors
    assert cursor.owner == "bae46700581e"
    assert cursor.cursor == {"from": "L1583417617283", "limit": 10}


@pytest.mark.real_pages
def test_any_arguments_of_the_connection_are_read(austin: str, frozen_now: datetime) -> None:
    """The same state with the connection's key in another form and other arguments."""
    renamed = re.sub(
        r'homepagePostsConnection:\{\\?"paging\\?":\{\\?"limit\\?":10\},'
        r'\\?"includeDistributedResponses\\?":true\}',
        "homepagePostsConnection:(paging:(limit:25),includeDistributedResponses:false)",
        without_cards(austin),
    )
    assert "limit:25" in renamed
    result = parse_page(renamed, AUSTIN_URL, kind="author", scraped_at=frozen_now)
    assert len(result.items_of("story")) == 10
    assert result.cursors[0].cursor["from"] == "L1583417617283"


def test_wrong_typed_connection_is_a_note_not_a_crash(frozen_now: datetime) -> None:
    page = (FIXTURES / "own/author/profile_2022_state_only/input.html").read_text()
    state = page.split("window.__APOLLO_STATE__ = ", 1)[1].split("</script>", 1)[0]
    data = json.loads(state)
    user = data["User:5e5e5e5e5e5e"]
    for key in [k for k in user if k.startswith("homepagePostsConnection")]:
        user[key] = {"posts": 7, "pagingInfo": [1]}
    broken = page.replace(state, json.dumps(data))
    result = parse_page(broken, "https://ritabakes.medium.com/", kind="author")
    assert result.items_of("author")
    assert result.items_of("story") == []
    assert result.cursors == []
    assert any("posts is an integer, not a list" in e for e in result.errors)
