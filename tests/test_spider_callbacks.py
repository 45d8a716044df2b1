"""The ``topics`` spider's callbacks on recorded responses (scrapy-mock cassettes).

The cassettes in ``tests/fixtures/cassettes/`` were recorded from the local site
served at a stable address, ``python -m topics_crawler.site --port 8731`` (scrapy-mock
matches requests by URL). Under ``CI=true`` they are played back only; locally a
missing cassette is recorded once — delete one and serve the site on that port
to record it again. scrapy-mock keeps bodies only (no status, no headers), so the
status and header behaviour is tested with responses built directly.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
from scrapy import Request, signals
from scrapy.http import HtmlResponse, Response
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from topics_crawler.items import Author, Publication, Story, TagEdge, TagPage, TagStory
from topics_crawler.signals import page_failed
from topics_crawler.spiders.topics import TopicsSpider

RECORDED_SITE = "http://127.0.0.1:8731"
TAG_URL = f"{RECORDED_SITE}/tag/distributed-training"
STORY_URL = (
    f"{RECORDED_SITE}/pinterest-engineering/"
    "achieving-near-linear-training-scalability-for-pinterests-foundation-models-ae81651e4034"
)
AUTHOR_URL = f"{RECORDED_SITE}/@meetvaddoriya"


def make_spider(**arguments: str) -> TopicsSpider:
    crawler = get_crawler(TopicsSpider)
    spider = TopicsSpider.from_crawler(crawler, **(arguments or {"tags": "distributed-training"}))
    crawler.stats.open_spider()
    crawler.signals.send_catch_log(signals.spider_opened, spider=spider)
    return spider


def record_failures(spider: TopicsSpider) -> list[dict[str, Any]]:
    """Collect the ``page_failed`` signals the spider sends."""
    failures: list[dict[str, Any]] = []

    def on_page_failed(**details: Any) -> None:
        failures.append(details)

    spider.crawler.signals.connect(on_page_failed, signal=page_failed, weak=False)
    return failures


def as_medium(response: Response) -> Response:
    """The response as the mirror middleware hands it to the spider: canonical URL."""
    return response.replace(url=response.url.replace(RECORDED_SITE, "https://medium.com"))


def split(outputs: Iterable[Any]) -> tuple[list[Any], list[Request]]:
    results = list(outputs)
    return [o for o in results if not isinstance(o, Request)], [
        o for o in results if isinstance(o, Request)
    ]


@pytest.mark.parametrize("url", [TAG_URL])
def test_tag_page_yields_tag_item_and_follows_each_entity_once(response: Response) -> None:
    spider = make_spider()
    items, requests = split(spider.parse_tag(as_medium(response)))
    assert [type(i) for i in items if not isinstance(i, TagEdge | TagStory)] == [TagPage]
    tag_page = items[0]
    edges = [i for i in items if isinstance(i, TagEdge)]
    assert edges
    listed = [i for i in items if isinstance(i, TagStory)]
    section_ids = {story_id for ids in tag_page.sections.values() for story_id in ids}
    assert listed
    assert {row.story_id for row in listed} == section_ids
    assert {(row.tag, row.source) for row in listed} == {("distributed-training", "section")}
    assert all(row.section in tag_page.sections for row in listed)
    assert {(e.from_tag, e.kind) for e in edges} >= {("distributed-training", "related")}
    assert tag_page.tag == "distributed-training"
    kinds = [r.meta["entity_kind"] for r in requests]
    assert set(kinds) == {"story", "author", "publication"}
    urls = [r.url for r in requests]
    assert len(urls) == len(set(urls)), "each entity requested once"
    assert all(u.startswith("https://medium.com/") and "?" not in u for u in urls)
    story_ids = {i for ids in tag_page.sections.values() for i in ids}
    story_requests = [r for r in requests if r.meta["entity_kind"] == "story"]
    assert {r.cb_kwargs["known"].story_id for r in story_requests} == story_ids
    assert all(r.callback == spider.parse_story for r in story_requests)


@pytest.mark.parametrize("url", [TAG_URL])
def test_follow_none_exports_the_tag_page_and_its_edges_only(response: Response) -> None:
    spider = make_spider(tags="distributed-training", follow="none")
    items, requests = split(spider.parse_tag(as_medium(response)))
    assert requests == []
    assert {type(i) for i in items} == {TagPage, TagEdge}
    assert spider.exported_types == {"tag_page", "tag_edge"}


@pytest.mark.parametrize("url", [TAG_URL])
def test_follow_stories_exports_no_author_or_publication_from_cards(response: Response) -> None:
    spider = make_spider(tags="distributed-training", follow="stories")
    items, requests = split(spider.parse_tag(as_medium(response)))
    assert {type(i) for i in items} == {TagPage, TagEdge, TagStory}
    assert {r.meta["entity_kind"] for r in requests} == {"story"}


@pytest.mark.parametrize("url", [TAG_URL])
def test_cards_yield_what_the_listing_knew_instead(response: Response) -> None:
    spider = make_spider(
        tags="distributed-training", max_stories="2", follow="none", cards="stories"
    )
    items, requests = split(spider.parse_tag(as_medium(response)))
    assert requests == []
    stories = [i for i in items if isinstance(i, Story)]
    assert len(stories) == 2
    assert all(s.title and s.author_name for s in stories)
    assert not any(isinstance(i, Author | Publication) for i in items)
    spider = make_spider(tags="distributed-training", follow="none", cards="stories,authors")
    items, _ = split(spider.parse_tag(as_medium(response)))
    assert any(isinstance(i, Author) for i in items), "authors known from the page state"
    assert spider.exported_types == {"tag_page", "tag_edge", "story", "tag_story", "author"}


@pytest.mark.parametrize("url", [STORY_URL])
def test_story_page_merges_what_the_card_knew(response: Response) -> None:
    spider = make_spider()
    card = Story(story_id="ae81651e4034", image_url="https://miro.medium.com/card.png", claps=1)
    items, requests = split(spider.parse_story(as_medium(response), known=card))
    story = items[0]
    assert isinstance(story, Story)
    assert story.story_id == "ae81651e4034"
    assert story.claps != 1, "the page's own count wins over the card's"
    assert story.text
    assert story.publication_slug == "pinterest-engineering"
    followed = {r.meta["entity_kind"]: r for r in requests}
    assert set(followed) == {"author", "publication"}
    assert isinstance(followed["author"].cb_kwargs["known"], Author)
    assert isinstance(followed["publication"].cb_kwargs["known"], Publication)


@pytest.mark.parametrize("url", [AUTHOR_URL])
def test_author_page_fills_gaps_from_what_was_known(response: Response) -> None:
    spider = make_spider()
    known = Author(username="meetvaddoriya", image_url="https://miro.medium.com/known.png")
    items, requests = split(spider.parse_author(as_medium(response), known=known))
    assert requests == []
    (author,) = items
    assert author.username == "meetvaddoriya"
    assert author.name == "Meet Vaddoriya"
    assert author.followers is not None


def test_an_unparseable_plain_page_goes_to_the_browser_and_is_not_yet_a_failure() -> None:
    spider = make_spider()
    failures = record_failures(spider)
    known = Author(username="someone", name="Some One")
    request = Request(
        "https://medium.com/@someone", meta={"entity_kind": "author"}, cb_kwargs={"known": known}
    )
    garbage = HtmlResponse(request.url, body=b"<html><body>Oops</body></html>", request=request)
    items, requests = split(spider.parse_author(garbage, known=known))
    assert items == []
    (again,) = requests
    assert again.meta["render_reason"] == "author"
    assert again.cb_kwargs == {"known": known}
    assert failures == []
    assert spider.crawler.stats.get_value("parse/failed/author") is None


def test_unparseable_page_is_counted_reported_and_keeps_what_was_known() -> None:
    spider = make_spider()
    failures = record_failures(spider)
    known = Author(username="someone", name="Some One")
    # the browser's answer (render_count 1) is used whatever it is
    request = Request(
        "https://medium.com/@someone", meta={"entity_kind": "author", "render_count": 1}
    )
    garbage = HtmlResponse(request.url, body=b"<html><body>Oops</body></html>", request=request)
    items, _ = split(spider.parse_author(garbage, known=known))
    assert items == [known]
    stats = spider.crawler.stats
    assert stats.get_value("parse/failed/author") == 1
    assert failures[0]["reason"] == "parse_failed"
    assert failures[0]["url"] == "https://medium.com/@someone"


def test_http_error_reports_status_and_yields_the_partial_item() -> None:
    spider = make_spider()
    failures = record_failures(spider)
    known = Story(story_id="0123456789ab", title="From the card")
    request = Request(
        "https://medium.com/@a/t-0123456789ab",
        meta={"entity_kind": "story", "retry_times": 2},
        cb_kwargs={"known": known},
    )
    response = HtmlResponse(request.url, status=503, body=b"", request=request)
    failure = Failure(HttpError(response))
    failure.request = request  # type: ignore[attr-defined]
    assert list(spider.on_error(failure)) == [known]
    assert failures[0]["status"] == 503
    assert failures[0]["reason"] == "http_503"
    assert failures[0]["attempts"] == 3
    assert spider.crawler.stats.get_value("fetch/kept_partial/story") == 1
