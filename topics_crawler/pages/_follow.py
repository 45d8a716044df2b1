"""Follower counts and display names as profile and publication pages print them.

Shared by the author and publication parsers: ``"12K followers"`` /
``"5 Following"`` texts in the DOM, ``"Name – Medium"`` titles, and a picker
that keeps each count together with the ``*_raw`` text of the same layer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import lxml.html

from topics_crawler.items.values import clean_text, read_count

#: ``12K followers``, ``1,204 Followers``, ``5 following``; the whole text of one element.
FOLLOW_TEXT_RE = re.compile(
    r"^(?P<count>\d[\d,.]*\s*[KMB]?)\s+(?P<label>followers?|following)$", re.IGNORECASE
)
#: Small elements that may hold a whole "12K followers" text.
FOLLOW_XPATH = "//body//*[self::span or self::a or self::p or self::div or self::button]"
_SITE_SUFFIX_RE = re.compile(r"\s+[-–—|]\s+Medium$")
_MAX_LABEL_LENGTH = 40
#: Longest raw text (indentation included) worth cleaning: an element holding more is a
#: container, not a label, and cleaning every big container's text is quadratic.
_MAX_RAW_LENGTH = 1_000


def follow_counts(elements: Iterable[lxml.html.HtmlElement]) -> dict[str, Any]:
    """``followers``/``followers_raw``/``following`` from the first element whose whole
    text is a follower or following count (``<span>12K followers</span>``)."""
    found: dict[str, Any] = {}
    for element in elements:
        raw_text = element.text_content()
        if len(raw_text) > _MAX_RAW_LENGTH:
            continue
        text = clean_text(raw_text)
        if text is None or len(text) > _MAX_LABEL_LENGTH:
            continue
        match = FOLLOW_TEXT_RE.match(text)
        if match is None:
            continue
        key = "following" if match.group("label").lower() == "following" else "followers"
        if key in found:
            continue
        count, raw = read_count(match.group("count"))
        found[key] = count
        if key == "followers":
            found["followers_raw"] = text if raw is not None else None
    return found


def strip_site_suffix(title: str | None) -> str | None:
    """``"Paweł Dąbrowski – Medium"`` → ``"Paweł Dąbrowski"``."""
    text = clean_text(title)
    if text is None:
        return None
    return clean_text(_SITE_SUFFIX_RE.sub("", text))
