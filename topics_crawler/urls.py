"""Medium URL rules: canonical form, post ids, and what kind of page a link points to.

Links are recognised by URL pattern, never by CSS class, so a redesign of
Medium's markup does not blind the crawler.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import Literal
from urllib.parse import SplitResult, quote, unquote, urljoin, urlsplit

from w3lib.url import canonicalize_url

MEDIUM_HOST = "medium.com"
MEDIUM_ROOT = "https://medium.com"
MAX_URL_LENGTH = 2048
#: Request meta flag set by spiders: this host is a publication's custom domain on Medium.
MEDIUM_CUSTOM_DOMAIN_META = "medium_custom_domain"

LinkKind = Literal["story", "author", "publication", "tag"]

#: A post id: lowercase hex, 10 to 12 characters (10 and 11 in older posts).
POST_ID_RE = re.compile(r"^[0-9a-f]{10,12}$")
_SLUG_ID_RE = re.compile(r"-([0-9a-f]{10,12})$")
_APP_LINK_RE = re.compile(r"^medium://p/([0-9a-f]{10,12})$")
_USERNAME_RE = re.compile(r"^@([A-Za-z0-9_.\-]{1,64})$")
#: An absolute http(s) URL whose netloc is a plain ``host[:port]`` and which holds no
#: character ``urlsplit`` would strip or treat specially: everything else goes through it.
_SIMPLE_URL_RE = re.compile(r"(?i:https?)://([^/?#@\[\]\\\s]*)(?=[/?#]|\Z)([^?#\s]*)(?:[?#]\S*)?\Z")
_ORIGIN_RE = re.compile(r"^https?://[^/?#]+", re.IGNORECASE)
_SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9\-_]{0,99}$")
#: Tag slugs keep Unicode letters (``compétition`` is not ``competition`` on Medium).
_TAG_SLUG_RE = re.compile(r"^[^\W_][\w\-]{0,99}$")

#: First path segments on medium.com that are Medium's own pages, not publications.
RESERVED_SEGMENTS = frozenset(
    """
    _ about ai brand business careers creators explore-topics feed followers following
    gift-plans help help-center jobs jobs-at-medium lists m mastodon me membership new-story
    notifications p partner-program plans policy press privacy-policy search settings signin
    sitemap stats subscribe tag tags topic topics upgrade verified-authors
    """.split()  # noqa: SIM905 - a word list reads better than 41 quoted strings
)
#: Subdomains of medium.com that are Medium's own services, not users or publications.
RESERVED_SUBDOMAINS = frozenset(
    {"www", "help", "blog", "policy", "cdn-images-1", "miro", "cdn-static-1", "glyph", "api"}
)


@dataclass(frozen=True, slots=True)
class MediumLink:
    """A link recognised as a Medium entity.

    ``key`` is the post id (story), username (author), slug or host
    (publication) or tag slug (tag); ``url`` is the canonical URL.
    """

    kind: LinkKind
    key: str
    url: str


def split_url(url: str) -> SplitResult | None:
    """:func:`urllib.parse.urlsplit`, or None for text it refuses (``http://[::1``:
    "Invalid IPv6 URL") — a broken link in a page says nothing, it must not raise."""
    try:
        return urlsplit(url)
    except ValueError:
        return None


def is_medium_domain(host: str) -> bool:
    """medium.com or any of its subdomains (``miro.medium.com`` included); ``host`` is
    lowercase, without port. For "a host whose pages we follow" see :func:`is_medium_host`."""
    return host == MEDIUM_HOST or host.endswith("." + MEDIUM_HOST)


def is_medium_host(host: str, custom_domains: Iterable[str] = ()) -> bool:
    """True for medium.com, its subdomains and the given publication custom domains."""
    host = host.lower().rstrip(".")
    if host.startswith("www."):
        host = host[4:]
    if host == MEDIUM_HOST or host.endswith("." + MEDIUM_HOST):
        return host.split(".")[0] not in RESERVED_SUBDOMAINS or host == MEDIUM_HOST
    return host in {d.lower() for d in custom_domains}


def canonical_url(url: str, base: str | None = None) -> str | None:
    """Canonical form of ``url``: https, lowercase host without ``www.``, no query,
    no fragment, no trailing slash. Relative URLs resolve against ``base``.

    Returns None for URLs that are not http(s), have no host, or are absurdly long.
    """
    parts = _canonical_parts(url, base)
    return None if parts is None else f"https://{parts[0]}{parts[1]}"


def _canonical_parts(url: str, base: str | None) -> tuple[str, str] | None:
    """``(host[:port], path)`` of the canonical form of ``url`` (one parse of the URL)."""
    if not url or len(url) > MAX_URL_LENGTH:
        return None
    url = url.strip()
    try:
        if base:
            url = _join(base, url)
        simple = _SIMPLE_URL_RE.match(url)
        if simple is not None:  # the usual http(s)://host[:port]/path, read in one match
            netloc, path = simple.group(1), simple.group(2)
            host, port = _split_netloc(netloc)
        else:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https"):
                return None
            path = parts.path
            host, port = _host_and_port(parts)
    except ValueError:  # "Invalid IPv6 URL", a port out of range…
        return None
    if not host:
        return None
    host = host.rstrip(".")
    if host.startswith("www."):
        host = host[4:]
    if port and port not in (80, 443):
        host = f"{host}:{port}"
    path = path or "/"
    if "%" in path or not path.isascii() or " " in path:
        path = _one_encoding(path)
    if "//" in path:
        path = re.sub(r"/{2,}", "/", path)
    if len(path) > 1:
        path = path.rstrip("/") or "/"
    return host, path


def _one_encoding(path: str) -> str:
    """The path in one spelling whether it came percent-encoded or literal (w3lib's
    canonicalization): ``/%40ev`` → ``/@ev``, ``/p/-à-`` → ``/p/-%C3%A0-``."""
    try:
        return urlsplit(canonicalize_url(f"https://h{path}")).path
    except ValueError:  # a path w3lib cannot read (brackets…): kept as it came
        return path


def _host_and_port(parts: SplitResult) -> tuple[str | None, int | None]:
    """Lowercase host and port of a split URL; the plain ``host[:port]`` netloc is read
    directly, anything else (user info, IPv6) through ``urlsplit``'s own properties."""
    netloc = parts.netloc
    if "@" in netloc or "[" in netloc or "]" in netloc:
        return parts.hostname, parts.port
    return _split_netloc(netloc)


def _split_netloc(netloc: str) -> tuple[str | None, int | None]:
    """Lowercase host and port of a plain ``host[:port]`` netloc (as ``urlsplit`` reads it)."""
    host, _, port_text = netloc.partition(":")
    if not port_text:
        return host.lower() or None, None
    if not port_text.isascii() or not port_text.isdigit() or int(port_text) > 65535:
        raise ValueError(f"port out of range or not a number: {port_text!r}")
    return host.lower() or None, int(port_text)


def _join(base: str, href: str) -> str:
    """``urljoin(base, href)`` as :func:`canonical_url` sees it, without its cost for the
    common shapes: an absolute http(s) URL, or a root-relative path (``/@user?source=…``)
    with no dot segments."""
    if href.startswith(("https://", "http://")):
        return href
    if href.startswith("/") and not href.startswith("//") and "/." not in href:
        match = _ORIGIN_RE.match(base)
        if match:
            return match.group(0) + href
    return urljoin(base, href)


def post_id_from_url(url: str) -> str | None:
    """Medium post id in a story URL (``…-c9700a7cf36d``, ``/p/<id>``, ``medium://p/<id>``)."""
    if not url:
        return None
    app = _APP_LINK_RE.match(url.strip())
    if app:
        return app.group(1)
    parts = split_url(url.strip())
    return _post_id_from_segments([s for s in parts.path.split("/") if s]) if parts else None


def _post_id_from_segments(segments: list[str]) -> str | None:
    if len(segments) >= 2 and segments[-2] == "p" and POST_ID_RE.match(segments[-1]):
        return segments[-1]
    if segments:
        match = _SLUG_ID_RE.search(unquote(segments[-1]))
        if match:
            return match.group(1)
    return None


def cross_post_url(
    candidate: object, story_id: str | None, custom_domains: Iterable[str] = ()
) -> str | None:
    """``candidate`` (trimmed) when it names a story's original off Medium — a cross-post's
    canonical URL on Substack, habr.com, dev.to —; None when it is not an http(s) URL, or is
    the story on Medium: a Medium host, one of ``custom_domains``, or a URL ending in the
    story's own post id (a publication's custom domain the page did not declare)."""
    if not isinstance(candidate, str) or not candidate.strip():
        return None
    url = candidate.strip()
    parts = split_url(url)
    if parts is None or parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    if is_medium_host(parts.hostname, custom_domains) or is_medium_domain(parts.hostname):
        return None
    if story_id and post_id_from_url(url) == story_id:
        return None
    return url


def classify_url(
    url: str, base: str | None = None, custom_domains: Iterable[str] = ()
) -> MediumLink | None:
    """What Medium entity ``url`` points to, or None when it is not one we follow.

    Recognised shapes (host medium.com unless said otherwise):

    * ``/tag/<slug>`` (and ``/tag/<slug>/latest``, ``/archive``…) → tag
    * ``/@user`` → author; ``/@user/<slug>-<id>`` → story; ``/p/<id>`` → story
    * ``/<pub>`` → publication; ``/<pub>/<slug>-<id>`` → story
    * ``<name>.medium.com/<slug>-<id>`` and ``<custom-domain>/<slug>-<id>`` → story
    * ``<custom-domain>/`` → publication (only for the given custom domains)
    """
    parts = _canonical_parts(url, base)
    if parts is None:
        return None
    host, path = parts
    if not is_medium_host(host.split(":")[0], custom_domains):
        return None
    canonical = f"https://{host}{path}"
    raw_segments = [s for s in path.split("/") if s]
    segments = [unquote(s) for s in raw_segments]
    on_root = host == MEDIUM_HOST
    post_id = _post_id_from_segments(raw_segments)

    if on_root and segments:
        head = segments[0]
        if head == "tag" and len(segments) >= 2 and _TAG_SLUG_RE.match(segments[1].lower()):
            slug = segments[1].lower()
            return MediumLink("tag", slug, tag_url(slug))
        if head == "p" and len(segments) == 2 and post_id:
            return MediumLink("story", post_id, canonical)
        user = _USERNAME_RE.match(head)
        if user:
            if len(segments) == 1:
                name = user.group(1)
                return MediumLink("author", name.lower(), f"{MEDIUM_ROOT}/@{name}")
            if len(segments) == 2 and post_id:
                return MediumLink("story", post_id, canonical)
            return None
        if head.lower() in RESERVED_SEGMENTS or not _SLUG_RE.match(head.lower()):
            return None
        if len(segments) == 1:
            slug = head.lower()
            return MediumLink("publication", slug, f"{MEDIUM_ROOT}/{slug}")
        if len(segments) == 2 and post_id:
            return MediumLink("story", post_id, canonical)
        return None
    if not on_root:
        if len(segments) == 1 and post_id:
            return MediumLink("story", post_id, canonical)
        if not segments and not host.endswith("." + MEDIUM_HOST):
            return MediumLink("publication", host, canonical)
    return None


def tag_url(slug: str) -> str:
    """Canonical tag page URL for a tag slug."""
    return f"{MEDIUM_ROOT}/tag/{quote(slug.strip().lower())}"


def post_url(post_id: str) -> str:
    """Medium's own short address of a story (``/p/<id>``; it redirects to the story)."""
    return f"{MEDIUM_ROOT}/p/{post_id}"


def author_url(username: str) -> str:
    """Canonical profile URL for a username (with or without ``@``)."""
    return f"{MEDIUM_ROOT}/@{username.lstrip('@')}"


def publication_url(slug: str, domain: str | None = None) -> str:
    """Canonical home URL of a publication: its custom domain when it has one."""
    if domain:
        return f"https://{domain.lower()}/"
    return f"{MEDIUM_ROOT}/{slug.lower()}"


@dataclass(frozen=True, slots=True)
class TagArchiveAddress:
    """A page of a tag's archive: ``/tag/<slug>/archive`` (the whole archive), ``…/YYYY``,
    ``…/YYYY/MM`` or ``…/YYYY/MM/DD`` (a day), and its ``?page=N`` (a day split in pages)."""

    tag: str
    year: int | None = None
    month: int | None = None
    day: int | None = None
    page: int = 1

    @property
    def level(self) -> Literal["archive", "year", "month", "day"]:
        """How deep the address is: the archive's root, a year, a month or a day."""
        if self.day is not None:
            return "day"
        if self.month is not None:
            return "month"
        return "year" if self.year is not None else "archive"

    @property
    def url(self) -> str:
        """The canonical URL (``https://medium.com/tag/python/archive/2026/09/10?page=2``)."""
        parts = [f"{self.year:04d}"] if self.year is not None else []
        parts += [f"{self.month:02d}"] if self.month is not None else []
        parts += [f"{self.day:02d}"] if self.day is not None else []
        path = "/".join([tag_url(self.tag) + "/archive", *parts])
        return path if self.page == 1 else f"{path}?page={self.page}"

    def label(self) -> str:
        """``python``, ``python 2026``, ``python 2026-09``, ``python 2026-09-10 page 2``."""
        parts = [f"{self.year:04d}"] if self.year is not None else []
        parts += [f"{self.month:02d}"] if self.month is not None else []
        parts += [f"{self.day:02d}"] if self.day is not None else []
        label = f"{self.tag} {'-'.join(parts)}".strip()
        return label if self.page == 1 else f"{label} page {self.page}"


_ARCHIVE_PAGE_RE = re.compile(r"(?:^|&)page=(\d{1,6})(?:&|$)")


def parse_tag_archive_url(url: str) -> TagArchiveAddress | None:
    """The archive page ``url`` addresses on medium.com, or None when it is not one (a date
    that cannot exist, a page 0, another path)."""
    parts = split_url(url.strip()) if url else None
    if parts is None or parts.scheme not in ("http", "https"):
        return None
    segments = [unquote(s) for s in parts.path.split("/") if s]
    if len(segments) < 3 or segments[0] != "tag" or segments[2] != "archive":
        return None
    if len(segments) > 6 or not _TAG_SLUG_RE.match(segments[1].lower()):
        return None
    numbers = segments[3:]
    widths = (4, 2, 2)
    if any(
        not n.isascii() or not n.isdigit() or len(n) != w
        for n, w in zip(numbers, widths, strict=False)
    ):
        return None
    year, month, day = (int(n) for n in [*numbers, "0", "0", "0"][:3])
    if numbers and not (1970 <= year <= 9999):
        return None
    if len(numbers) > 1 and not 1 <= month <= 12:
        return None
    if len(numbers) > 2 and not _is_date(year, month, day):
        return None
    page_match = _ARCHIVE_PAGE_RE.search(parts.query)
    page = int(page_match.group(1)) if page_match else 1
    if page < 1:
        return None
    return TagArchiveAddress(
        segments[1].lower(),
        year if numbers else None,
        month if len(numbers) > 1 else None,
        day if len(numbers) > 2 else None,
        page,
    )


def _is_date(year: int, month: int, day: int) -> bool:
    try:
        date(year, month, day)
    except ValueError:
        return False
    return True
