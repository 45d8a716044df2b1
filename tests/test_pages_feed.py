"""RSS feed parser: what the fixtures do not show (XML safety, ids, channel shapes)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from topics_crawler.items import Author, Publication, Story
from topics_crawler.pages import PageResult, parse_page

FEED_HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<rss xmlns:dc="http://purl.org/dc/elements/1.1/" '
    'xmlns:content="http://purl.org/rss/1.0/modules/content/" '
    'xmlns:atom="http://www.w3.org/2005/Atom" version="2.0">'
)


def feed(items: str, *, title: str = "Stories by Ada Byte on Medium", link: str = "") -> str:
    link = link or "https://medium.com/@adabyte?source=rss-0a1b2c3d4e5f------2"
    return (
        f"{FEED_HEAD}<channel><title><![CDATA[{title}]]></title><link>{link}</link>"
        f"{items}</channel></rss>"
    )


def item(
    *,
    guid: str | None = "https://medium.com/p/0123456789ab",
    link: str = "https://medium.com/@adabyte/a-story-0123456789ab?source=rss-0a1b2c3d4e5f------2",
    extra: str = "",
) -> str:
    guid_xml = f'<guid isPermaLink="false">{guid}</guid>' if guid is not None else ""
    return (
        f"<item><title><![CDATA[A story]]></title><link>{link}</link>{guid_xml}"
        f"<dc:creator><![CDATA[Ada Byte]]></dc:creator>{extra}</item>"
    )


def parse(body: str | bytes, url: str, frozen_now: datetime) -> PageResult:
    return parse_page(body, url, kind="feed", scraped_at=frozen_now)


def stories(result: PageResult) -> list[Story]:
    return [i for i in result.items if isinstance(i, Story)]


def test_external_entity_is_not_read(tmp_path: Path, frozen_now: datetime) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-VALUE", encoding="utf-8")
    body = (
        f'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY xxe SYSTEM "file://{secret}">]>'
        + feed(item(extra="<category>&xxe;</category>")).split("?>", 1)[1]
    ).replace("<![CDATA[A story]]>", "A story &xxe;")
    result = parse(body, "https://medium.com/feed/@adabyte", frozen_now)
    (story,) = stories(result)
    assert story.title == "A story"
    assert story.tags == []
    assert "TOP-SECRET-VALUE" not in repr(result)


def test_entity_expansion_bomb_is_refused(frozen_now: datetime) -> None:
    lol = "".join(f'<!ENTITY l{n} "{("&l" + str(n - 1) + ";") * 10}">' for n in range(1, 10))
    body = f'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY l0 "lol">{lol}]>' + feed(item()).split(
        "?>", 1
    )[1].replace("<![CDATA[A story]]>", "&l9;")
    result = parse(body, "https://medium.com/feed/@adabyte", frozen_now)
    assert result.items == []
    assert result.errors[0].startswith("broken feed XML: Maximum entity amplification")


def test_guid_id_wins_over_link_id(frozen_now: datetime) -> None:
    body = feed(
        item(
            guid="https://medium.com/p/aaaaaaaaaaaa",
            link="https://medium.com/@adabyte/old-slug-bbbbbbbbbbbb?source=rss",
        )
    )
    (story,) = stories(parse(body, "https://medium.com/feed/@adabyte", frozen_now))
    assert story.story_id == "aaaaaaaaaaaa"
    assert story.url == "https://medium.com/@adabyte/old-slug-bbbbbbbbbbbb"


def test_link_gives_the_id_when_guid_is_missing_or_not_a_post(frozen_now: datetime) -> None:
    body = feed(item(guid=None) + item(guid="tag:medium.com,2026:post", link=LINK_2))
    found = stories(parse(body, "https://medium.com/feed/@adabyte", frozen_now))
    assert [s.story_id for s in found] == ["0123456789ab", "fedcba987654"]


LINK_2 = "https://medium.com/@adabyte/second-fedcba987654?source=rss-0a1b2c3d4e5f------2"


def test_item_without_any_post_id_is_an_error_not_an_item(frozen_now: datetime) -> None:
    body = feed(item(guid="nothing", link="https://medium.com/@adabyte/about"))
    result = parse(body, "https://medium.com/feed/@adabyte", frozen_now)
    assert stories(result) == []
    assert result.errors == ["feed item without a story id"]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("", "empty body"),
        ("<html><body><p>Not a feed</p></body></html>", "not an RSS feed"),
        (f"{FEED_HEAD}</rss>", "RSS feed without a channel"),
        ('{"payload": {}}', "broken feed XML"),
    ],
)
def test_not_a_feed_is_recorded(body: str, reason: str, frozen_now: datetime) -> None:
    result = parse(body, "https://medium.com/feed/@adabyte", frozen_now)
    assert result.items == []
    assert any(error.startswith(reason) for error in result.errors), result.errors


def test_publication_feed_owner_and_story_publication(frozen_now: datetime) -> None:
    body = feed(
        item(
            link="https://medium.com/cold-brew/a-story-0123456789ab?source=rss----9c0ffee12ab3---4"
        ),
        title="Cold Brew - Medium",
        link="https://medium.com/cold-brew?source=rss----9c0ffee12ab3---4",
    )
    result = parse(body, "https://medium.com/feed/cold-brew", frozen_now)
    owner, story = result.items
    assert isinstance(owner, Publication)
    assert (owner.publication_id, owner.slug, owner.name, owner.url) == (
        "9c0ffee12ab3",
        "cold-brew",
        "Cold Brew",
        "https://medium.com/cold-brew",
    )
    assert isinstance(story, Story)
    assert (story.publication_id, story.publication_slug, story.publication_name) == (
        "9c0ffee12ab3",
        "cold-brew",
        "Cold Brew",
    )
    assert story.author_username is None


def test_custom_domain_publication_feed(frozen_now: datetime) -> None:
    body = feed(
        item(link="https://brew.example.org/a-story-0123456789ab?source=rss----9c0ffee12ab3---4"),
        title="Cold Brew - Medium",
        link="https://brew.example.org?source=rss----9c0ffee12ab3---4",
    )
    result = parse(body, "https://brew.example.org/feed", frozen_now)
    owner = result.items[0]
    assert isinstance(owner, Publication)
    assert (owner.slug, owner.domain, owner.url) == (
        None,
        "brew.example.org",
        "https://brew.example.org/",
    )
    assert [(ln.kind, ln.key) for ln in result.links] == [("story", "0123456789ab")]


def test_a_custom_domain_feed_vouches_for_its_own_domain_only(frozen_now: datetime) -> None:
    """Medium's own feeds list publication stories under their domains (followed); a feed
    served from a custom domain cannot make a third host count as Medium's."""
    elsewhere = "https://metadata.attacker.example/a-story-0123456789ab"
    own = "https://brew.example.org/another-story-0fedcba98765"
    body = feed(item(link=elsewhere) + item(guid=None, link=own), title="Cold Brew - Medium")
    from_custom = parse(body, "https://brew.example.org/feed", frozen_now)
    assert {urlsplit(ln.url).hostname for ln in from_custom.links} == {"brew.example.org"}
    from_medium = parse(body, "https://medium.com/feed/@adabyte", frozen_now)
    assert {urlsplit(ln.url).hostname for ln in from_medium.links} == {
        "metadata.attacker.example",
        "brew.example.org",
    }


def test_user_feed_stamps_author_on_every_story(frozen_now: datetime) -> None:
    result = parse(feed(item()), "https://medium.com/feed/@adabyte", frozen_now)
    owner, story = result.items
    assert isinstance(owner, Author)
    assert (owner.author_id, owner.username, owner.name) == ("0a1b2c3d4e5f", "adabyte", "Ada Byte")
    assert isinstance(story, Story)
    assert (story.author_id, story.author_username) == ("0a1b2c3d4e5f", "adabyte")


def test_categories_become_unique_slugs(frozen_now: datetime) -> None:
    extra = "".join(
        f"<category><![CDATA[{c}]]></category>" for c in ("Machine Learning", "ai", "AI", "")
    )
    (story,) = stories(parse(feed(item(extra=extra)), "https://x.test/feed", frozen_now))
    assert story.tags == ["machine-learning", "ai"]


def test_tracking_pixel_and_footer_are_not_text(frozen_now: datetime) -> None:
    content = (
        "<p>Body.</p>"
        '<img src="https://medium.com/_/stat?event=post.clientViewed&amp;postId=0123456789ab">'
        '<hr><p><a href="https://x.test/a">A story</a> was originally published in '
        '<a href="https://brew.example.org">Cold Brew</a> on Medium.</p>'
    )
    extra = f"<content:encoded><![CDATA[{content}]]></content:encoded>"
    (story,) = stories(parse(feed(item(extra=extra)), "https://x.test/feed", frozen_now))
    assert story.text == "Body."
    assert story.text_is_preview is False
    assert story.publication_name == "Cold Brew"


def test_item_without_body_has_no_text(frozen_now: datetime) -> None:
    (story,) = stories(parse(feed(item()), "https://x.test/feed", frozen_now))
    assert (story.text, story.text_is_preview) == (None, None)


def test_non_ascii_bytes_decode(frozen_now: datetime) -> None:
    body = feed(item()).replace("A story", "Caf\u00e9").encode("utf-8")
    (story,) = stories(parse(body, "https://x.test/feed", frozen_now))
    assert story.title == "Caf\u00e9"
