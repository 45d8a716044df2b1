"""Small HTML building blocks shared by every page of the local site.

Escaping, the ``<head>`` (meta tags, canonical link, JSON-LD), the Apollo state
script with ``/`` written as ``\\u002F`` like Medium, count and date display,
and links carrying Medium-style ``?source=`` tracking.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from html import escape
from typing import Any
from urllib.parse import urlsplit

from topics_crawler.site.entities import MEDIUM_ROOT

MIRO = "https://miro.medium.com/v2"


def esc(text: object) -> str:
    """Text or attribute value, HTML-escaped (quotes included)."""
    return escape(str(text), quote=True)


def image_url(image_id: str, width: int, height: int | None = None) -> str:
    """miro URL of an image (``resize:fill`` with a height, ``resize:fit`` without)."""
    if height is None:
        return f"{MIRO}/resize:fit:{width}/{image_id}"
    return f"{MIRO}/resize:fill:{width}:{height}/{image_id}"


def short_count(value: int) -> str:
    """Count as Medium shows it: ``987``, ``1.2K``, ``12K``, ``1.3M``."""
    for limit, suffix in ((1_000_000, "M"), (1_000, "K")):
        if value >= limit:
            scaled = value / limit
            text = f"{scaled:.1f}" if scaled < 10 else f"{scaled:.0f}"
            return text.removesuffix(".0") + suffix
    return str(value)


def day_text(moment: datetime) -> str:
    """``Nov 3, 2025`` (story header and older cards)."""
    return f"{moment:%b} {moment.day}, {moment.year}"


def card_date(moment: datetime, now: datetime) -> str:
    """Card date: ``5h ago`` / ``3d ago`` within a week of ``now``, else the day."""
    age = now - moment
    if age.total_seconds() < 0 or age.days >= 7:
        return day_text(moment)
    if age.days >= 1:
        return f"{age.days}d ago"
    hours = int(age.total_seconds() // 3600)
    return f"{hours}h ago" if hours else "Just now"


def epoch_ms(moment: datetime) -> int:
    """Epoch milliseconds, the unit of Apollo timestamps."""
    return int(moment.timestamp() * 1000)


def href(target: str, page_host: str, source: str | None = None) -> str:
    """Link to the canonical URL ``target`` as Medium writes it on a page of ``page_host``.

    medium.com targets are relative on medium.com pages; other hosts (custom
    domains) and links from other hosts stay absolute. ``source`` adds the
    ``?source=`` tracking parameter.
    """
    parts = urlsplit(target)
    same_host = parts.netloc == "medium.com" and page_host == "medium.com"
    link = (parts.path or "/") if same_host else target
    return f"{link}?source={source}" if source else link


def tracking(placement: str, position: int, key: str = "") -> str:
    """A ``?source=`` value shaped like Medium's (``topic_page---------3----…``)."""
    return f"{placement}---------{position}----{key}-----------------------------"


def state_script(state: Mapping[str, Any]) -> str:
    """``<script>window.__APOLLO_STATE__ = {...}</script>`` with Medium's escaping."""
    text = json.dumps(state, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("/", "\\u002F").replace("<", "\\u003C")
    return f"<script>window.__APOLLO_STATE__ = {text}</script>"


def json_ld_script(data: Mapping[str, Any]) -> str:
    """A JSON-LD script tag (``<`` escaped so no string can close it)."""
    text = json.dumps(data, ensure_ascii=False).replace("<", "\\u003C")
    return f'<script type="application/ld+json">{text}</script>'


def meta_tags(properties: Mapping[str, str], names: Mapping[str, str]) -> str:
    """``<meta property=…>`` then ``<meta name=…>`` tags, in the given order."""
    tags = [
        f'<meta data-rh="true" property="{esc(k)}" content="{esc(v)}">'
        for k, v in properties.items()
    ]
    tags += [f'<meta data-rh="true" name="{esc(k)}" content="{esc(v)}">' for k, v in names.items()]
    return "".join(tags)


def page(
    *,
    title: str,
    canonical: str,
    properties: Mapping[str, str],
    names: Mapping[str, str],
    json_ld: Mapping[str, Any] | None,
    state: Mapping[str, Any] | None,
    body: str,
) -> str:
    """A whole HTML document in the shape of a 2023–2025 Medium page."""
    head = [
        '<meta data-rh="true" charset="utf-8">',
        f"<title>{esc(title)}</title>",
        '<meta data-rh="true" name="viewport" content="width=device-width,initial-scale=1">',
        meta_tags({"og:site_name": "Medium", **properties}, {"twitter:site": "@Medium", **names}),
        f'<link data-rh="true" rel="canonical" href="{esc(canonical)}">',
        json_ld_script(json_ld) if json_ld else "",
    ]
    return (
        '<!DOCTYPE html><html lang="en"><head>'
        + "".join(head)
        + '</head><body><div id="root"><div class="a b c">'
        + _top_bar()
        + body
        + "</div></div>"
        + (state_script(state) if state is not None else "")
        + "<script>window.__GRAPHQL_URI__ = "
        + json.dumps(f"{MEDIUM_ROOT}/_/graphql").replace("/", "\\u002F")
        + "</script></body></html>"
    )


def _top_bar() -> str:
    return (
        '<div class="l k j"><a data-testid="headerMediumLogo" href="/?source=post_page---top_nav'
        '_layout_nav-----------------------------------------" aria-label="Homepage">Medium</a>'
        '<a href="/m/signin?operation=login">Sign in</a></div>'
    )
