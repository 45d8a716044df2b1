"""Story images (``-s IMAGES_ENABLED=1``): which URLs, where they go, what the checks allow,
how a failure is counted; the local site's image host. The crawl itself:
tests/test_images_crawl.py."""

from __future__ import annotations

from io import BytesIO

import pytest
from PIL import Image
from scrapy.settings import BaseSettings
from scrapy.utils.test import get_crawler

from topics_crawler.commands.settings_check import settings_error
from topics_crawler.extensions.failures import FailureLog
from topics_crawler.items import Story
from topics_crawler.pages.markdown import Block, image_links, render_markdown
from topics_crawler.pipelines.images import fetch_url, images_store, story_images
from topics_crawler.safety.links import UrlPolicy
from topics_crawler.site.content import default_site
from topics_crawler.site.images import (
    BROKEN_IMAGE_ID,
    FEATURE_TABLE_ID,
    HUGE_IMAGE_BYTES,
    HUGE_IMAGE_ID,
    ONLINE_STORE_ID,
    image_answer,
)
from topics_crawler.site.markup import image_url

MIRO = "https://miro.medium.com/v2/resize:fit:1400/"


def test_image_links_are_the_figures_of_a_body_in_order_once_each() -> None:
    blocks = [
        Block("P", "Text with ![not an image](https://example.org/x.png) in it."),
        Block("IMG", "A caption", src=MIRO + "1*a(b).png", alt="alt ] text"),
        Block("PRE", "![code](https://example.org/code.png)"),
        Block("IMG", "", src="https://cdn-images-1.medium.com/max/800/0*Zz.jpeg"),
        Block("BQ", "quoted"),
        Block("IMG", "again", src=MIRO + "1*a(b).png"),
    ]
    markdown = render_markdown(blocks)
    assert markdown is not None
    assert image_links(markdown) == [
        MIRO + "1*a(b).png",
        "https://cdn-images-1.medium.com/max/800/0*Zz.jpeg",
    ]
    assert image_links("no images at all") == []


def test_a_medium_image_is_fetched_once_at_the_body_size() -> None:
    image_id = "1*AbCdEf-_12.jpeg"
    assert fetch_url(f"https://miro.medium.com/v2/resize:fit:1200/{image_id}") == MIRO + image_id
    assert fetch_url(f"https://miro.medium.com/v2/resize:fill:160:107/{image_id}") == (
        MIRO + image_id
    )
    assert fetch_url(f"https://cdn-images-1.medium.com/max/800/{image_id}") == MIRO + image_id
    other = "https://images.example.org/1*AbCdEf-_12.jpeg"
    assert fetch_url(other) == other
    assert fetch_url("https://miro.medium.com/v2/da:true/resize:fit:1200/logo.svg") == (
        "https://miro.medium.com/v2/da:true/resize:fit:1200/logo.svg"
    )


def test_story_images_preview_first_each_url_once() -> None:
    story = Story(
        story_id="0123456789ab",
        image_url=MIRO + "1*p.jpeg",
        markdown=f"![]({MIRO}1*p.jpeg)\n\nText.\n\n![x]({MIRO}1*b.png)",
    )
    assert story_images(story) == [("preview", MIRO + "1*p.jpeg"), ("body", MIRO + "1*b.png")]
    assert story_images(Story(story_id="0123456789ab")) == []


def test_images_go_to_the_store_the_dataset_or_beside_the_feed(tmp_path) -> None:
    assert images_store(BaseSettings({"IMAGES_STORE": "/srv/img"})) == ("/srv/img", "/srv/img/")
    dataset = BaseSettings({"DATASET_DIR": str(tmp_path), "FEEDS": {"out/items.jsonl": {}}})
    assert images_store(dataset) == (str(tmp_path / "images"), "images/")
    feed = BaseSettings({"FEEDS": {str(tmp_path / "items.jsonl"): {"format": "jsonl"}}})
    assert images_store(feed) == (str(tmp_path / "images"), "images/")
    assert images_store(BaseSettings({"FEEDS": {"s3://bucket/items.jsonl": {}}})) is None


def test_images_on_without_a_place_is_a_bad_setting(tmp_path) -> None:
    nowhere = settings_error(BaseSettings({"IMAGES_ENABLED": "1"}))
    assert nowhere is not None
    assert nowhere.startswith("IMAGES_ENABLED: on, but there is nowhere to store images")
    feed = {str(tmp_path / "items.jsonl"): {"format": "jsonl"}}
    assert settings_error(BaseSettings({"IMAGES_ENABLED": "1", "FEEDS": feed})) is None
    assert settings_error(BaseSettings({"IMAGES_ENABLED": "0"})) is None
    assert settings_error(BaseSettings({"IMAGES_ENABLED": "maybe"})) is not None


def test_medium_image_hosts_pass_the_link_checks_and_nothing_else_new() -> None:
    policy = UrlPolicy()
    assert policy.refusal(MIRO + "1*a.jpeg") is None
    assert policy.refusal("https://cdn-images-1.medium.com/max/800/1*a.jpeg") is None
    assert policy.refusal("https://images.example.org/charts/a.png") == "other_host"
    assert policy.refusal("https://i.imgur.com/a.png") == "other_host"


def test_an_image_failure_is_listed_but_not_a_page_failure(tmp_path) -> None:
    crawler = get_crawler(settings_dict={"FAILURES_FILE": str(tmp_path / "failures.jsonl")})
    stats = crawler.stats
    assert stats is not None
    log = FailureLog.from_crawler(crawler)
    log.spider_opened(None)  # type: ignore[arg-type]
    log.page_failed(url=MIRO + "1*x.jpeg", kind="image", status=200, reason="unreadable_image",
                    attempts=1)  # fmt: skip
    log.spider_closed(None)  # type: ignore[arg-type]
    assert stats.get_value("failures/image/unreadable_image") == 1
    assert stats.get_value("failures/total") is None
    assert '"kind": "image"' in (tmp_path / "failures.jsonl").read_text()


# --- the local site's image host --------------------------------------------------------


def test_the_site_serves_images_and_the_two_that_go_wrong() -> None:
    status, body, _ = image_answer("/v2/resize:fit:1400/" + FEATURE_TABLE_ID)
    assert status == 200
    assert Image.open(BytesIO(body)).size == (48, 32)
    assert image_answer("/v2/resize:fit:1200/" + FEATURE_TABLE_ID)[1] == body  # any size
    status, body, _ = image_answer("/v2/resize:fit:1400/" + BROKEN_IMAGE_ID)
    assert status == 200
    with pytest.raises(Image.UnidentifiedImageError):
        Image.open(BytesIO(body))
    assert len(image_answer("/v2/resize:fit:1400/" + HUGE_IMAGE_ID)[1]) == HUGE_IMAGE_BYTES
    assert image_answer("/v2/resize:fit:1400/logo.svg")[0] == 404


def test_a_member_only_story_shows_only_the_figures_of_its_preview() -> None:
    site = default_site()
    story = next(s for s in site.stories.values() if s.slug == "feature-stores-without-the-hype")
    assert story.member_only
    shown = [b.image_id for b in story.body() if not isinstance(b, str)]
    assert shown == [FEATURE_TABLE_ID]
    assert ONLINE_STORE_ID in [figure.image_id for figure in story.figures]
    assert image_url(ONLINE_STORE_ID, 1400).startswith("https://miro.medium.com/")
