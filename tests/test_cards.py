"""Listing cards: the real 2025 home feed (HTML path) and 2020 home (state path)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from topics_crawler.pages import Document
from topics_crawler.pages._cards import parse_cards
from topics_crawler.pages._posts import listed_posts, listing_story

HOMEFEED_2025 = "homefeed_featured__medium-mcp-server-2025-loggedin-redacted.html"
HOME_2020 = "home_logged-out__humblefool96-medium-crawler-2020.html"

#: (id, title, author username, author name, publication slug, member-only, date text, ISO)
EXPECTED_2025 = [
    ("3f58f1f00c2a", "Developers Are Gaming Their GitHub Profiles", "paoloperrone",
     "Paolo Perrone", "data-science-collective", False, "1d ago", "2026-11-29T12:00:00Z"),
    ("56afe4182780", "3I/ATLAS, Gods, and Aliens: When Intelligent Agency Enters Too Early",
     "vaseghisam", "Sam Vaseghi", "the-quantastic-journal", False, "3d ago",
     "2026-11-27T12:00:00Z"),
    ("a948de01137b", "Setting America Back: How the Environmental Protection Agency Is About "
     "to Make It Harder to Breathe", "epiren", "René F. Najera, MPH, DrPH",
     "the-quantastic-journal", True, "Dec 16", "2025-12-16T00:00:00Z"),
    ("9ca4c5091d11", "The Realistic Guide to Mastering AI Agents in 2026", "paoloperrone",
     "Paolo Perrone", "data-science-collective", False, "Dec 15", "2025-12-15T00:00:00Z"),
    ("5f5a10a265e3", "How Many Cards Until You Get an Ace?", "colefp", "Cole Frederick",
     "science-spectrum", True, "Dec 14", "2025-12-14T00:00:00Z"),
]  # fmt: skip


@pytest.fixture
def homefeed_doc(real_pages: Path, frozen_now: datetime) -> Document:
    page = real_pages / HOMEFEED_2025
    return Document(page.read_bytes(), "https://medium.com/", scraped_at=frozen_now)


@pytest.mark.real_pages
def test_homefeed_2025_main_cards(homefeed_doc: Document) -> None:
    cards = parse_cards(homefeed_doc)
    assert len(cards) == len(EXPECTED_2025)
    for card, expected in zip(cards, EXPECTED_2025, strict=True):
        story_id, title, username, name, pub, locked, date_raw, date_iso = expected
        story = card.story
        assert (story.story_id, story.title) == (story_id, title)
        assert (story.author_username, story.author_name) == (username, name)
        assert story.publication_slug == pub
        assert story.is_member_only is locked
        assert (story.published_at_raw, story.published_at) == (date_raw, date_iso)
        assert story.url == f"https://medium.com/{pub}/" + story.url.rsplit("/", 1)[-1]
        assert {(link.kind, link.key) for link in card.links} == {
            ("story", story_id),
            ("author", username),
            ("publication", pub),
        }


@pytest.mark.real_pages
def test_homefeed_2025_counts_follow_their_icons(homefeed_doc: Document) -> None:
    counts = [(c.story.claps, c.story.responses) for c in parse_cards(homefeed_doc)]
    # the third card shows only a clap count: it must not be read as responses
    assert counts == [(204, 7), (403, 5), (89, None), (937, 18), (600, 13)]


@pytest.mark.real_pages
def test_homefeed_2025_names_and_images(homefeed_doc: Document) -> None:
    first = parse_cards(homefeed_doc)[0].story
    assert first.publication_name == "Data Science Collective"
    assert first.subtitle == (
        "The uncomfortable truth about contribution graphs, hiring signals, "
        "and 18k+ stars worth of vanity tools"
    )
    # the preview thumbnail, not the 20px publication avatar
    assert first.image_url == (
        "https://miro.medium.com/v2/resize:fill:160:107/1*VZ1aX57qM_RfKyAa85USuA.png"
    )


@pytest.mark.real_pages
def test_home_2020_state_path(real_pages: Path, frozen_now: datetime) -> None:
    page = real_pages / HOME_2020
    doc = Document(page.read_bytes(), "https://medium.com/", scraped_at=frozen_now)
    state = doc.state
    assert state is not None
    feed = listed_posts(state.root.node("homeFeedWithExplanation"))
    trending = listed_posts(state.root.node("trendingPostsModule"))
    assert len(feed) == 10
    assert [p.id for p in trending][:2] == ["e0bbfa873db", "a31f351c729e"]
    story = listing_story(feed[0], doc.scraped_at)
    assert story.story_id == "21257fe1f32a"
    assert story.title == "A Radical Proposal for Dealing with Trump Supporters After Biden Wins"
    assert story.subtitle == "You’re not gonna like this. But hear me out."
    assert (story.author_id, story.author_username) == ("413aa13e738e", "russjosephs")
    assert (story.publication_id, story.publication_slug) == ("9ae413a59f94", "bigger-picture")
    assert story.published_at == "2020-10-15T16:15:04Z"
    assert (story.claps, story.claps_raw, story.is_member_only) == (13935, None, True)
    assert story.url == (
        "https://medium.com/bigger-picture/"
        "a-radical-proposal-for-dealing-with-trump-supporters-after-biden-wins-21257fe1f32a"
    )


def test_card_found_by_url_pattern_without_classes(frozen_now: datetime) -> None:
    html = (
        '<html><body><div role="link" data-href="https://medium.com/@ann/hello-world-0123456789ab">'
        '<a href="/@ann?source=x"><p>Ann Lee</p></a>'
        '<a href="/@ann/hello-world-0123456789ab?source=x"><h2>Hello World</h2></a>'
        "<span>2h ago</span><span>1.2K</span><span>7</span></div>"
        '<article><a href="/about">No story here</a></article></body></html>'
    )
    doc = Document(html, "https://medium.com/tag/x", scraped_at=frozen_now)
    [card] = parse_cards(doc)
    story = card.story
    assert (story.story_id, story.title, story.author_name) == (
        "0123456789ab",
        "Hello World",
        "Ann Lee",
    )
    assert (story.published_at, story.published_at_raw) == ("2026-11-30T10:00:00Z", "2h ago")
    assert (story.claps, story.claps_raw, story.responses) == (1200, "1.2K", 7)
    assert story.is_member_only is False
    assert story.publication_slug is None


def test_state_fills_what_the_card_lacks(frozen_now: datetime) -> None:
    state = (
        '{"Post:0123456789ab":{"__typename":"Post","id":"0123456789ab","clapCount":1234,'
        '"firstPublishedAt":1795857207417,"isLocked":true,"creator":{"__ref":"User:aa11"}},'
        '"User:aa11":{"__typename":"User","id":"aa11","username":"ann","name":"Ann L."}}'
    )
    html = (
        '<html><body><article><a href="/@ann/hello-world-0123456789ab"><h2>Hello World</h2></a>'
        '<a href="/@ann"><p>Ann Lee</p></a><span>2d ago</span><span>1.2K</span></article>'
        f"<script>window.__APOLLO_STATE__ = {state}</script></body></html>"
    )
    doc = Document(html, "https://medium.com/tag/x", scraped_at=frozen_now)
    story = parse_cards(doc)[0].story
    assert story.author_name == "Ann Lee"  # what the reader sees
    assert story.author_id == "aa11"  # only the state has it
    assert (story.claps, story.claps_raw) == (1234, None)  # exact count, no stale raw
    assert (story.published_at, story.published_at_raw) == ("2026-11-28T09:13:27Z", None)
    assert story.is_member_only is True
