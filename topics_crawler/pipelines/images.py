"""Story images through Scrapy's own ``ImagesPipeline``: off by default, ``-s IMAGES_ENABLED=1``.

For every story the crawl exports, its preview image (``image_url``) and the images of its
body (the ``![…](…)`` of ``markdown``: a member-only story's preview has only the preview's)
are fetched through the downloader like any page — the link checks
(:mod:`topics_crawler.safety.links`: Medium's image hosts pass, nothing else new does), the
mirror, robots.txt and the same per-host rate control (:mod:`topics_crawler.middlewares.rate`)
— each URL once per crawl (Scrapy's media cache), and stored as Scrapy stores them:
``full/<sha1 of the URL>.jpg`` under the store, skipped when already there and younger
than ``IMAGES_EXPIRES`` days. A miro image named at several sizes (the 1200 px preview,
the 1400 px body copy) is fetched once, at the body's size.

The store: ``IMAGES_STORE`` when set, else ``<DATASET_DIR>/images``, else ``images/``
beside the first local feed file (:func:`images_store`). Each story row lists its images in
``images``: ``{"role": "preview"|"body", "url", "path", "checksum", "failure"}``, ``path``
relative to the dataset or feed folder (``images/full/….jpg``; under an ``IMAGES_STORE`` of
your own, that store's path), ``failure`` the reason when it could not be stored.

A failed image never costs its story: the row is exported with ``path`` None and the
reason; the image is listed in ``failures.jsonl`` (kind ``image``) and counted
(``images/failed/<reason>``: ``http_<status>``, ``too_large`` past ``IMAGES_MAX_SIZE``,
``unsafe_url``, ``unreadable_image``, a download error's name). Stats: ``images/requested``,
``images/stored``, ``images/stories``, Scrapy's ``file_status_count/*``.
"""

from __future__ import annotations

import logging
import re
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.http.request import NO_CALLBACK
from scrapy.pipelines.images import ImagesPipeline
from scrapy.pipelines.media import FileException

from topics_crawler.items import Story
from topics_crawler.middlewares.download_failures import failure_status
from topics_crawler.middlewares.render_policy import ENTITY_KIND_META
from topics_crawler.output.sidecar import sidecar_path
from topics_crawler.pages.markdown import IMAGE_URL, image_links
from topics_crawler.signals import page_failed

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.pipelines.media import FileInfo, FileInfoOrError, MediaPipeline
    from scrapy.settings import BaseSettings
    from twisted.python.failure import Failure

logger = logging.getLogger(__name__)

IMAGES_FOLDER = "images"
#: Request meta key: which of a story's images a request fetches (``preview`` / ``body``).
IMAGE_ROLE_META = "image_role"
#: Hosts that serve Medium's images by image id (``…/<size>/<imageId>``).
_IMAGE_HOSTS = frozenset({"miro.medium.com", "cdn-images-1.medium.com"})
_IMAGE_ID_RE = re.compile(r"^[0-9]\*[A-Za-z0-9_-]+(?:\.[A-Za-z0-9]+)?$")


def images_store(settings: BaseSettings) -> tuple[str, str] | None:
    """``(store, row prefix)``: where images go and what a row's ``path`` starts with;
    None when there is no output folder to put them beside."""
    explicit = settings.get("IMAGES_STORE")
    if explicit:
        return str(explicit), str(explicit).rstrip("/") + "/"
    folder = sidecar_path(settings, "IMAGES_STORE", IMAGES_FOLDER)
    if folder is None:
        return None
    return str(folder), f"{IMAGES_FOLDER}/"


def fetch_url(url: str) -> str:
    """The URL an image is fetched from: a Medium image id at the body's size (one file for
    the preview and the body copy of the same image), anything else as given."""
    parts = urlsplit(url)
    if (parts.hostname or "").lower() in _IMAGE_HOSTS:
        image_id = parts.path.rsplit("/", 1)[-1]
        if _IMAGE_ID_RE.match(image_id):
            return IMAGE_URL.format(id=image_id)
    return url


def story_images(story: Story) -> list[tuple[str, str]]:
    """``(role, url)`` of a story's images, preview first, each URL once."""
    found: dict[str, str] = {}
    if story.image_url:
        found[story.image_url] = "preview"
    for url in image_links(story.markdown or ""):
        found.setdefault(url, "body")
    return [(role, url) for url, role in found.items()]


class ImageFailed(FileException):
    """An image that could not be stored: ``status`` (last HTTP status or None), ``reason``."""

    def __init__(self, status: int | None, reason: str, attempts: int | None = None) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.attempts = attempts


class StoryImagesPipeline(ImagesPipeline):
    """Scrapy's ``ImagesPipeline`` for the images of :class:`~topics_crawler.items.Story` items."""

    LOG_FAILED_RESULTS = False  # each failure is one warning line of ours, and recorded

    def __init__(
        self, store_uri: str | None = None, download_func: None = None, *, crawler: Crawler
    ) -> None:
        """``store_uri`` (``IMAGES_STORE``) is ignored: the store is :func:`images_store`'s."""
        store = images_store(crawler.settings)
        if store is None:  # the settings check refuses this before a crawl starts
            raise NotConfigured("IMAGES_ENABLED: no IMAGES_STORE, DATASET_DIR or local feed")
        Path(store[0]).mkdir(parents=True, exist_ok=True)
        super().__init__(store[0], crawler=crawler)
        self.row_prefix = store[1]
        self.max_size = crawler.settings.getint("IMAGES_MAX_SIZE")
        #: Fetched URL → why it could not be stored (this crawl).
        self.failed: dict[str, str] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        if not crawler.settings.getbool("IMAGES_ENABLED"):
            # off by default: a NotConfigured without a message, so Scrapy warns of nothing
            raise NotConfigured
        return super().from_crawler(crawler)

    # --- requests -----------------------------------------------------------------------

    def get_media_requests(self, item: Any, info: MediaPipeline.SpiderInfo) -> list[Request]:
        if not isinstance(item, Story):
            return []
        requests = [
            Request(
                fetch_url(url),
                callback=NO_CALLBACK,
                meta={
                    ENTITY_KIND_META: "image",
                    IMAGE_ROLE_META: role,
                    "download_maxsize": self.max_size,
                    "story_url": item.url,
                },
            )
            for role, url in story_images(item)
        ]
        if requests:
            self._inc("images/stories")
            self._inc("images/requested", len(requests))
        return requests

    # --- answers ------------------------------------------------------------------------

    async def media_downloaded(
        self,
        response: Response,
        request: Request,
        info: MediaPipeline.SpiderInfo,
        *,
        item: Any = None,
    ) -> FileInfo:
        sent = response.request
        attempts = sent.meta.get("retry_times", 0) + 1 if sent is not None else None
        if response.status != 200:
            raise ImageFailed(response.status, f"http_{response.status}", attempts)
        from PIL import Image  # noqa: PLC0415 (the images extra; only when images are on)

        try:  # the header only: a body that is no image fails here, not in Scrapy's convert
            Image.open(BytesIO(response.body))
        except Exception as exc:
            raise ImageFailed(response.status, "unreadable_image", attempts) from exc
        return await super().media_downloaded(response, request, info, item=item)

    def media_failed(
        self, failure: Failure, request: Request, info: MediaPipeline.SpiderInfo
    ) -> Any:
        """Record the failure (once per URL: Scrapy's media cache answers the other stories
        with the same image) and answer with no file instead of raising: a failed image is
        data about the story, not an error to log with a traceback."""
        error = failure.value
        if isinstance(error, ImageFailed):
            status, reason, attempts = error.status, error.reason, error.attempts
        elif isinstance(error, FileException):
            status, reason, attempts = None, "unreadable_image", None
        else:
            status, reason = failure_status(failure)
            attempts = None
        self._inc("images/failed")
        self._inc(f"images/failed/{reason}")
        logger.warning(
            "Image not stored (%s): %s (in %s)", reason, request.url, request.meta.get("story_url")
        )
        self.crawler.signals.send_catch_log(
            signal=page_failed,
            url=request.url,
            kind="image",
            status=status,
            reason=reason,
            attempts=attempts,
            spider=info.spider,
        )
        self.failed[request.url] = reason

    def item_completed(
        self, results: list[FileInfoOrError], item: Any, info: MediaPipeline.SpiderInfo
    ) -> Any:
        if not isinstance(item, Story):
            return item
        item.images = [
            self._record(role, url, result if ok else None)
            for (role, url), (ok, result) in zip(story_images(item), results, strict=True)
        ]
        return item

    def _record(self, role: str, url: str, result: object) -> dict[str, str | None]:
        """A row's image: its local copy, or why there is none."""
        if isinstance(result, dict) and result.get("path"):
            self._inc("images/stored")
            return {
                "role": role,
                "url": url,
                "path": f"{self.row_prefix}{result['path']}",
                "checksum": result.get("checksum"),
                "failure": None,
            }
        failure = self.failed.get(fetch_url(url), "unknown")
        return {"role": role, "url": url, "path": None, "checksum": None, "failure": failure}

    def _inc(self, key: str, count: int = 1) -> None:
        assert self.crawler.stats is not None
        self.crawler.stats.inc_value(key, count)
