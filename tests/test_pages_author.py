"""Author parser: what the fixtures do not show (follower texts, user lookup, legacy URLs)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import lxml.html
import pytest

from topics_crawler.items import Author, Publication, Story
from topics_crawler.items.layers import pick_paired
from topics_crawler.pages import Document, parse_page
from topics_crawler.pages._follow import follow_counts, strip_site_suffix
from topics_crawler.pages._off_medium import left_medium_reason
from topics_crawler.pages.author import (
    find_user,
    legacy_post_url,
    page_username,
    parse_legacy_profile,
    stream_post_ids,
)
from topics_crawler.pages.state import State, parse_json_payload


def elements(markup: str) -> list[lxml.html.HtmlElement]:
    return list(lxml.html.fragment_fromstring(markup, create_parent="div").iter())


@pytest.mark.parametrize(
    ("markup", "expected"),
    [
        ("<span>12K followers</span>", {"followers": 12000, "followers_raw": "12K followers"}),
        ("<span>1,204 Followers</span>", {"followers": 1204, "followers_raw": None}),
        ("<a><span>1 follower</span></a>", {"followers": 1, "followers_raw": None}),
        ("<span>2.5M followers</span>", {"followers": 2500000, "followers_raw": "2.5M followers"}),
        ("<span>5 Following</span>", {"following": 5}),
        (
            "<a>2 Following</a><a>6 Followers</a>",
            {"following": 2, "followers": 6, "followers_raw": None},
        ),
    ],
)
def test_follow_text_forms(markup: str, expected: dict[str, Any]) -> None:
    assert follow_counts(elements(markup)) == expected


@pytest.mark.parametrize(
    "markup",
    [
        "<div>2 Following6 Followers</div>",  # two counts glued in one element
        "<p>Followers of this tag get 3 stories a day</p>",
        "<button>Follow</button>",
        "<span>followers</span>",
    ],
)
def test_text_that_is_not_one_count_is_ignored(markup: str) -> None:
    assert follow_counts(elements(markup)) == {}


def test_first_count_wins() -> None:
    found = follow_counts(elements("<span>3K followers</span><span>9 followers</span>"))
    assert found == {"followers": 3000, "followers_raw": "3K followers"}


def test_count_and_raw_come_from_the_same_layer() -> None:
    state = {"followers": 12034, "followers_raw": None, "name": None}
    dom = {"followers": 12000, "followers_raw": "12K followers", "name": "Lena"}
    assert pick_paired(state, dom) == {"followers": 12034, "name": "Lena"}
    assert pick_paired({}, dom)["followers_raw"] == "12K followers"


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ("Paweł Dąbrowski – Medium", "Paweł Dąbrowski"),
        ("Cold Brew Weekly - Medium", "Cold Brew Weekly"),
        ("Medium", "Medium"),
        (None, None),
    ],
)
def test_site_suffix(title: str | None, name: str | None) -> None:
    assert strip_site_suffix(title) == name


def test_username_sources_in_order() -> None:
    meta = '<meta property="profile:username" content="@Ada">'
    app = '<meta property="al:ios:url" content="medium://@bytes">'
    assert (
        page_username(Document(f"<html><head>{meta}{app}</head></html>", "https://x.test")) == "Ada"
    )
    assert page_username(Document(f"<html><head>{app}</head></html>", "https://x.test")) == "bytes"
    assert page_username(Document("<html></html>", "https://medium.com/@Lena?source=x")) == "Lena"
    assert page_username(Document("<html></html>", "https://medium.com/tag/ai")) is None


def user(user_id: str, username: str) -> dict[str, Any]:
    return {"__typename": "User", "id": user_id, "username": username, "name": username.title()}


def test_user_found_by_root_query_argument_not_cache_order() -> None:
    state = State.from_apollo(
        {
            "ROOT_QUERY": {
                'userResult({"username":"other"})': {"__ref": "User:aaa"},
                'userResult({"username":"lena"})': {"__ref": "User:bbb"},
            },
            "User:aaa": user("aaa", "other"),
            "User:bbb": user("bbb", "lena"),
        }
    )
    found = find_user(state, "Lena")
    assert found is not None
    assert found.id == "bbb"


def test_user_found_among_entities_without_root_query() -> None:
    state = State.from_apollo({"User:aaa": user("aaa", "other"), "User:bbb": user("bbb", "lena")})
    found = find_user(state, "lena")
    assert found is not None
    assert found.id == "bbb"
    assert find_user(state, "nobody") is None


def test_stream_ids_skip_headings_and_duplicates() -> None:
    payload = {
        "streamItems": [
            {"itemType": "heading", "heading": {"text": "Latest"}},
            {"itemType": "postPreview", "postPreview": {"postId": "aaaaaaaaaaaa"}},
            {"itemType": "postPreview", "postPreview": {"postId": "bbbbbbbbbbbb"}},
            {"itemType": "postPreview", "postPreview": {"postId": "aaaaaaaaaaaa"}},
            "junk",
        ]
    }
    assert stream_post_ids(State.from_payload(payload).root) == ["aaaaaaaaaaaa", "bbbbbbbbbbbb"]
    assert stream_post_ids(State.from_payload({"streamItems": None}).root) == []


@pytest.mark.parametrize(
    ("publication", "author", "url"),
    [
        (
            Publication(slug="itnext", domain="itnext.io"),
            None,
            "https://itnext.io/a-b-0123456789ab",
        ),
        (Publication(slug="webpack"), None, "https://medium.com/webpack/a-b-0123456789ab"),
        (None, Author(username="Ada"), "https://medium.com/@Ada/a-b-0123456789ab"),
        (None, None, "https://medium.com/p/0123456789ab"),
    ],
)
def test_legacy_post_url(publication: Publication | None, author: Author | None, url: str) -> None:
    post = State.from_payload({"id": "0123456789ab", "uniqueSlug": "a-b-0123456789ab"}).root
    assert legacy_post_url(post, author, publication) == url


def test_legacy_payload_without_user_is_an_error(frozen_now: datetime) -> None:
    doc = Document("{}", "https://medium.com/@x/latest?format=json", scraped_at=frozen_now)
    result = parse_legacy_profile(doc, State.from_payload({"streamItems": []}))
    assert result.items == []
    assert doc.errors == ["legacy profile without a user"]


def test_stream_posts_missing_from_references_are_skipped(frozen_now: datetime) -> None:
    payload = {
        "user": {"userId": "c0ffee0a1b2c", "username": "sam", "name": "Sam"},
        "streamItems": [{"itemType": "postPreview", "postPreview": {"postId": "0123456789ab"}}],
        "references": {"Post": {}},
    }
    doc = Document("{}", "https://medium.com/@sam/latest?format=json", scraped_at=frozen_now)
    result = parse_legacy_profile(doc, State.from_payload(payload))
    assert [item.item_type for item in result.items] == ["author"]
    assert result.links == []
    assert result.kind == "json"


def test_profile_json_goes_through_the_json_parser(real_pages: Path) -> None:
    path = real_pages / "json_author_mikecronin92_latest__mostly-focused-site-2019.json"
    body = path.read_bytes()
    result = parse_page(body, "https://medium.com/@mikecronin92/latest?format=json")
    payload = parse_json_payload(body.decode("utf-8"))["payload"]
    assert result.kind == "json"
    author, *stories, publication = result.items
    assert isinstance(author, Author)
    assert isinstance(publication, Publication)
    stream = stream_post_ids(State.from_payload(payload).root)
    assert [s.story_id for s in stories if isinstance(s, Story)] == stream
    assert payload["paging"]["next"]  # there is a next page, and it is not followed …
    assert [(ln.kind, ln.key) for ln in result.links] == [("story", post_id) for post_id in stream]
    [cursor] = result.cursors  # … but kept for a later archive crawl
    assert cursor.listing == "author_stories"
    assert cursor.owner == author.author_id
    assert cursor.cursor == payload["paging"]["next"]
    assert cursor.url == payload["paging"]["path"]


def test_page_without_any_profile_data_is_an_error() -> None:
    result = parse_page("<html><body><p>hello</p></body></html>", "https://x.test/", kind="author")
    assert result.items == []
    assert result.off_medium == "x.test"  # another host's page: it names the host
    assert result.errors == [left_medium_reason("x.test")]
    on_medium = parse_page("<html><body><p>hello</p></body></html>", "https://medium.com/@x")
    assert on_medium.items == []
    assert "no profile data found" in on_medium.errors


def test_profile_address_alone_is_not_an_author() -> None:
    result = parse_page(
        "<html><body><p>Page not found</p></body></html>",
        "https://medium.com/@ghost",
        kind="author",
    )
    assert result.items == []
    assert "no profile data found" in result.errors
