"""A host that left Medium: its page carries nothing of Medium's.

Publications moved to Medium on their own domains, and some moved away again while old
links still point there: ``towardsdatascience.com`` is a WordPress site since 2025, with no
Medium payload. Such a page must fail by name — "this host serves no Medium page" — not
become a story read from the other site's JSON-LD and meta tags, nor a vague parse error.

:func:`left_medium` is pure: a page on a host that is not medium.com (or one of its
subdomains) is Medium's when it shows any of Medium's marks — embedded state,
``og:site_name`` "Medium", a ``medium://`` app link, ``@Medium`` as its Twitter site, a
title naming Medium (a script shell), Medium's asset hosts in its head. A blank body
says nothing (it is no evidence of a move).
"""

from __future__ import annotations

from topics_crawler.pages._document import Document
from topics_crawler.urls import is_medium_domain, split_url

#: Medium's asset and image hosts, as named in a page's ``<head>``.
_ASSET_MARKERS = ("cdn-client.medium.com", "glyph.medium.com", "miro.medium.com")
#: How much of the page's start is searched for them.
_HEAD_CHARS = 32 * 1024


def left_medium(doc: Document) -> str | None:
    """The host of ``doc`` when it is not a Medium host and the page shows no mark of
    Medium (the host left Medium, or the link was never Medium's); else None."""
    parts = split_url(doc.url)
    host = (parts.hostname or "").lower() if parts is not None else ""
    if not host or is_medium_domain(host) or doc.is_blank() or doc.tree is None:
        return None
    return None if _shows_medium(doc) else host


def left_medium_reason(host: str) -> str:
    """The one line that names the host (parse error, log line, ``extract``)."""
    return (
        f"{host} is no Medium site any more (its page has no Medium data): "
        "links to it are not crawled"
    )


def _shows_medium(doc: Document) -> bool:
    meta = doc.meta
    if meta.get("og:site_name", "").strip().lower() == "medium":
        return True
    if any(value.strip().startswith("medium://") for value in meta.values()):
        return True
    if meta.get("twitter:site", "").strip().lower() == "@medium":
        return True
    titles = [str(t) for t in doc.xpath("//title/text()")]
    if any("medium" in title.lower() for title in titles):
        return True
    head = doc.head(_HEAD_CHARS)
    if any(marker in head for marker in _ASSET_MARKERS):
        return True
    return doc.state is not None
