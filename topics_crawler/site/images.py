"""Images of the local site: Medium's image host and the figures of some stories.

``https://miro.medium.com/v2/<transforms>/<imageId>`` (and ``cdn-images-1.medium.com``) is
served under ``/_host/<host>/…`` as the crawler's mirror maps it: a small PNG made from the
image id, the same bytes for every size of one id, except two ids that go wrong the way a
CDN does — :data:`BROKEN_IMAGE_ID` answers 200 with a body that is no image,
:data:`HUGE_IMAGE_ID` answers :data:`HUGE_IMAGE_BYTES` bytes (past the crawler's
``IMAGES_MAX_SIZE``). Any other path on the host is a 404.

:func:`add_figures` gives some default stories body figures (two stories share one image,
a member-only story has one in its preview and one behind the wall);
:func:`add_offsite_story` turns a story into a page without state whose figure is an
image on another host (:data:`OFFSITE_IMAGE_URL`), which the crawler must refuse to fetch.
"""

from __future__ import annotations

import hashlib
import struct
import zlib

from topics_crawler.site.entities import SiteFigure, make_image_id
from topics_crawler.site.model import SiteContent

IMAGE_HOSTS = frozenset({"miro.medium.com", "cdn-images-1.medium.com"})
BROKEN_IMAGE_ID = make_image_id("figure:broken")
HUGE_IMAGE_ID = make_image_id("figure:huge")
#: Past the crawler's default IMAGES_MAX_SIZE (10 MiB).
HUGE_IMAGE_BYTES = 12 * 1024 * 1024
OFFSITE_IMAGE_URL = "https://images.example.org/charts/validation-curve.png"
WHITEBOARD_ID = make_image_id("figure:whiteboard")
CHECKPOINTS_ID = make_image_id("figure:checkpoints")
PARALLELISM_ID = make_image_id("figure:parallelism")
FEATURE_TABLE_ID = make_image_id("figure:feature-table")
ONLINE_STORE_ID = make_image_id("figure:online-store")
RANKING_ID = make_image_id("figure:ranking")

_WIDTH, _HEIGHT = 48, 32


def png(seed: str, width: int = _WIDTH, height: int = _HEIGHT) -> bytes:
    """A valid PNG of one colour drawn from ``seed`` (no imaging library needed)."""
    red, green, blue = hashlib.sha256(seed.encode()).digest()[:3]
    row = b"\x00" + bytes((red, green, blue)) * width
    raw = zlib.compress(row * height, 9)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", raw) + chunk(b"IEND", b"")


def image_answer(path: str) -> tuple[int, bytes, str]:
    """``(status, body, content type)`` for a path on an image host (after the host)."""
    image_id = path.rstrip("/").rsplit("/", 1)[-1]
    if not image_id.startswith(("0*", "1*")):
        return 404, b"Not Found", "text/plain"
    if image_id == BROKEN_IMAGE_ID:
        return 200, b"upstream image unavailable\n", "image/jpeg"
    if image_id == HUGE_IMAGE_ID:
        return 200, b"\x00" * HUGE_IMAGE_BYTES, "image/jpeg"
    return 200, png(image_id), "image/png"


def add_figures(site: SiteContent) -> None:
    """Figures in some stories of the default site (see the module docstring)."""
    by_slug = {story.slug: story for story in site.stories.values()}
    figures = {
        "gradient-checkpointing-explained-with-a-whiteboard": [
            SiteFigure(1, WHITEBOARD_ID, alt="A whiteboard of layers", caption="The whiteboard"),
            SiteFigure(3, CHECKPOINTS_ID, caption="Checkpoints every sqrt(n) layers"),
        ],
        "how-are-large-language-models-trained-at-scale": [
            SiteFigure(1, PARALLELISM_ID, alt="Four kinds of parallelism"),
            SiteFigure(2, WHITEBOARD_ID, caption="The same whiteboard, borrowed"),
            SiteFigure(3, BROKEN_IMAGE_ID, caption="A chart the CDN lost"),
        ],
        "feature-stores-without-the-hype": [
            SiteFigure(1, FEATURE_TABLE_ID, caption="One offline table"),
            SiteFigure(3, ONLINE_STORE_ID, caption="Behind the wall"),
        ],
        "scaling-ads-ranking-models-at-pinterest": [
            SiteFigure(2, HUGE_IMAGE_ID, caption="The full-resolution architecture diagram"),
            SiteFigure(3, RANKING_ID),
        ],
    }
    for slug, figures_of_story in figures.items():
        by_slug[slug].figures = figures_of_story


def add_offsite_story(site: SiteContent) -> str:
    """Serve the validation-curve story without state, with a figure on another host;
    returns its id."""
    story = next(s for s in site.stories.values() if s.slug.startswith("what-your-validation"))
    story.state = False
    story.figures = [SiteFigure(1, url=OFFSITE_IMAGE_URL, caption="Hosted elsewhere")]
    return story.id
