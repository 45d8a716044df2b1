"""One fetched page, with every data layer exposed lazily.

A :class:`Document` is built from the bytes (or text) of a page and its URL;
parsers read what they need from it: the lxml tree, meta tags, JSON-LD
objects, the Apollo state or the legacy embedded JSON. Decoding problems are
recorded in :attr:`Document.errors` instead of raised.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

import lxml.html
from lxml import etree

from topics_crawler.items.values import format_timestamp
from topics_crawler.pages._encoding import decode, reads_as_utf8
from topics_crawler.pages._html_tree import HTML_PARSER, UTF8_HTML_PARSER, iter_tags
from topics_crawler.pages._result import FetchAgain
from topics_crawler.pages.state import (
    Node,
    State,
    StateError,
    find_apollo_state,
    find_legacy_state,
    load_json,
)
from topics_crawler.urls import MediumLink, classify_url, is_medium_domain

#: Tags that :meth:`Document.iter_tags` serves from one shared walk of the tree (few per
#: page; anchors, hundreds, are read as :attr:`Document.hrefs` without element objects).
INDEXED_TAGS = ("meta", "link", "script")
#: Class names whose elements, once found, also answer the names they start
#: (``graf`` → ``graf--title``, ``graf--subtitle``) without another walk of the tree.
CLASS_STEMS = ("graf",)
#: Prefixes of class names that parsers ask for several of on one page (``pw-post-title``,
#: ``pw-author-name``, …): the elements whose ``class`` contains the prefix are found by
#: one walk of the tree, and each name is picked from them by its token.
CLASS_PREFIXES = ("pw-",)
#: Shared beginnings of the markers parsers look for: a page without the beginning has
#: none of them, so :meth:`Document.contains` scans for it once instead of for each one.
MARKER_PREFIXES = ("pw-", "graf", 'data-testid="')
#: Tokens of a ``class`` value as XPath's ``normalize-space`` splits them.
_CLASS_TOKENS = re.compile(r"[^ \t\r\n]+")
#: Where notes on JSON-LD values say they are (``JSON-LD.headline is a number, …``).
_JSON_LD_KEY = "JSON-LD"
#: Every anchor's ``href``, document order, as plain strings (no element proxies made).
_HREFS = etree.XPath("//a/@href", smart_strings=False)


def note_into(errors: list[str]) -> Callable[[str], None]:
    """A callback that records a reason in ``errors`` once. The states a
    :class:`Document` owns note through it rather than a bound ``Document.error``: that
    would make every page with state a reference cycle (page → state → page), whose
    tree and JSON only the cyclic garbage collector frees, and whose collections then
    walk them again and again while later pages are parsed."""

    def note(reason: str) -> None:
        if reason not in errors:
            errors.append(reason)

    return note


class Document:
    """A page (HTML, JSON or XML) plus its URL and fetch time."""

    def __init__(
        self,
        body: bytes | str,
        url: str,
        *,
        scraped_at: datetime | None = None,
        encoding: str | None = None,
    ) -> None:
        self.url = url
        #: The body when it is clean UTF-8: lxml and the state reader work on these bytes,
        #: and the text is decoded only when a parser asks for it — a str copy of a big
        #: page costs 1–4 bytes per character (one emoji makes every character 4 bytes).
        self._utf8_body: bytes | None = None
        self._text: str | None = None
        if isinstance(body, bytes) and reads_as_utf8(body, encoding):
            self._utf8_body = body
        else:
            self._text, codec = decode(body, encoding)
            if isinstance(body, bytes) and codec == "utf-8":
                self._utf8_body = body
        self.now = scraped_at or datetime.now(UTC)
        self.scraped_at = format_timestamp(self.now)
        self.errors: list[str] = []
        #: :meth:`error` as a callback for the states this page owns (see :func:`note_into`).
        self.note = note_into(self.errors)
        #: Typed "fetch this again" signals found while reading the page (broken state).
        self.signals: list[FetchAgain] = []
        self._markers: dict[str, bool] = {}
        #: What parsers work out once per page and read more than once (their own keys).
        self.memo: dict[str, Any] = {}

    @property
    def text(self) -> str:
        """The page as text (decoded on first use for clean UTF-8 bodies)."""
        if self._text is None:
            self._text = (self._utf8_body or b"").decode("utf-8")
        return self._text

    def _text_unless_bytes(self) -> str | None:
        """The text, unless the clean UTF-8 bytes can be read instead (then None)."""
        return None if self._utf8_body is not None else self.text

    def head(self, chars: int) -> str:
        """The first ``chars`` characters of the text, without decoding the whole body."""
        if self._text is not None or self._utf8_body is None:
            return self.text[:chars]
        return self._utf8_body[: chars * 4].decode("utf-8", errors="ignore")[:chars]

    def tail(self, chars: int) -> str:
        """The last ``chars`` characters of the text, without decoding the whole body."""
        if self._text is not None or self._utf8_body is None:
            return self.text[-chars:]
        return self._utf8_body[-chars * 4 :].decode("utf-8", errors="ignore")[-chars:]

    def is_blank(self) -> bool:
        """No text, or only white space."""
        if self._utf8_body is not None:
            return not self._utf8_body.strip()
        return not self.text or self.text.isspace()

    def error(self, reason: str) -> None:
        """Record a problem with this page (reported as ``parse/errors/<kind>``)."""
        self.note(reason)

    @cached_property
    def tree(self) -> lxml.html.HtmlElement | None:
        """The parsed HTML tree, or None for an empty / unparseable body."""
        if self.is_blank():
            self.error("empty body")
            return None
        try:
            if self._utf8_body is not None:
                return lxml.html.fromstring(self._utf8_body, parser=UTF8_HTML_PARSER)
            return lxml.html.fromstring(self.text, parser=HTML_PARSER)
        except (etree.ParserError, ValueError) as exc:
            try:  # lxml refuses str with an encoding declaration
                return lxml.html.fromstring(self.text.encode("utf-8"), parser=HTML_PARSER)
            except (etree.ParserError, ValueError):
                self.error(f"unparseable HTML: {exc}")
                return None

    def xpath(self, query: str) -> list[Any]:
        """XPath results on the tree; empty when there is no tree."""
        tree = self.tree
        if tree is None:
            return []
        try:
            return list(tree.xpath(query))
        except etree.XPathError:
            return []

    def iter_tags(self, *tags: str) -> Iterator[lxml.html.HtmlElement]:
        """:func:`~topics_crawler.pages._html_tree.iter_tags` on the tree; none without a
        tree. The tags every parser reads (:data:`INDEXED_TAGS`) come from one walk of the
        tree, shared by all of them."""
        if len(tags) == 1 and tags[0] in INDEXED_TAGS:
            return iter(self._indexed_tags.get(tags[0], ()))
        tree = self.tree
        return iter(()) if tree is None else iter_tags(tree, *tags)

    @cached_property
    def hrefs(self) -> list[str]:
        """The ``href`` of every ``<a>``, document order; empty without a tree."""
        found = _HREFS(self.tree) if self.tree is not None else []
        return [str(href) for href in found] if isinstance(found, list) else []

    @cached_property
    def _indexed_tags(self) -> dict[str, list[lxml.html.HtmlElement]]:
        tree = self.tree
        found: dict[str, list[lxml.html.HtmlElement]] = {}
        for element in iter_tags(tree, *INDEXED_TAGS) if tree is not None else ():
            found.setdefault(element.tag, []).append(element)
        return found

    def contains(self, marker: str) -> bool:
        """``marker in self.text``, remembered: layers ask about the same markers repeatedly,
        and each miss is a scan of the whole page (of its UTF-8 bytes when it has them)."""
        found = self._markers.get(marker)
        if found is None:
            prefix = next((p for p in MARKER_PREFIXES if marker.startswith(p)), marker)
            if prefix != marker and not self.contains(prefix):
                found = False  # no pw-… at all: no pw-author-name either (one scan, not six)
            else:
                body = self._utf8_body
                found = marker.encode("utf-8") in body if body is not None else marker in self.text
            self._markers[marker] = found
        return found

    def with_class(self, name: str) -> list[lxml.html.HtmlElement]:
        """Elements whose ``class`` has the token ``name``, document order (what the XPath
        ``contains(concat(' ', normalize-space(@class), ' '), ' name ')`` selects), found
        once per page: a page without ``name`` costs one substring search; else libxml2
        finds the elements whose ``class`` contains ``name`` (a substring test, several
        times cheaper than its token test) and the token is checked on those. Names of a
        stem or prefix (:data:`CLASS_STEMS`, :data:`CLASS_PREFIXES`: ``graf--title``,
        ``pw-author-name``) share one walk for the stem or prefix."""
        key = f"class:{name}"
        found = self.memo.get(key)
        if found is not None:
            return list(found)
        if not self.contains(name):
            found = []
        else:
            shared = next((s for s in (*CLASS_STEMS, *CLASS_PREFIXES) if name.startswith(s)), name)
            found = [
                element
                for element, classes in self._with_class_substring(shared)
                if name in classes and name in _CLASS_TOKENS.findall(classes)
            ]
        self.memo[key] = found
        return list(found)

    def _with_class_substring(self, text: str) -> list[tuple[lxml.html.HtmlElement, str]]:
        """``(element, class)`` of the elements whose ``class`` contains ``text``
        anywhere, document order, found once per page."""
        key = f"class-substring:{text}"
        found = self.memo.get(key)
        if found is None:
            found = [
                (element, element.get("class") or "")
                for element in self.xpath(f"//@class[contains(., '{text}')]/parent::*")
            ]
            self.memo[key] = found
        return found

    @cached_property
    def meta(self) -> dict[str, str]:
        """Meta tags by ``property``/``name`` (first occurrence wins).

        Some re-serialised captures write ``value=`` instead of ``content=``.
        """
        found: dict[str, str] = {}
        for element in self.iter_tags("meta"):
            key = element.get("property") or element.get("name") or element.get("itemprop")
            content = element.get("content")
            if content is None:
                content = element.get("value")
            if key and content is not None and key not in found:
                found[key] = content
        return found

    @cached_property
    def canonical_link(self) -> str | None:
        """``<link rel="canonical">`` href, if any."""
        for element in self.iter_tags("link"):
            href = element.get("href")
            if href is not None and element.get("rel") == "canonical":
                return str(href)
        return None

    @cached_property
    def json_ld(self) -> list[Node]:
        """Every JSON-LD object on the page (``@graph`` members flattened), as nodes of one
        :class:`State` whose notes go to :attr:`errors` (read them with the typed accessors)."""
        state = State(notes=self.note, source="JSON-LD")
        objects: list[Node] = []
        for script in self.iter_tags("script"):
            if script.get("type") != "application/ld+json":
                continue
            raw = (script.text or "").strip()
            if raw.startswith("<![CDATA["):
                raw = raw[len("<![CDATA[") :].removesuffix("]]>").strip()
            if not raw:
                continue
            try:
                value = load_json(raw)
            except StateError:
                self.error("broken JSON-LD")
                continue
            script_node = Node(state, {"script": value}, _JSON_LD_KEY)
            for obj in script_node.objects("script"):
                if isinstance(obj.value("@graph"), list):
                    objects.extend(obj.nodes("@graph"))
                else:
                    objects.append(obj)
        return objects

    def json_ld_of(self, *types: str) -> Node | None:
        """First JSON-LD object whose ``@type`` (one or a list) is one of ``types``."""
        for obj in self.json_ld:
            if any(kind in types for kind in obj.texts("@type")):
                return obj
        return None

    @cached_property
    def _apollo_cache(self) -> dict[str, Any] | None:
        try:
            return find_apollo_state(self._text_unless_bytes(), self._utf8_body)
        except StateError as exc:
            self.error(f"broken Apollo state: {exc}")
            self.signals.append(FetchAgain("broken_state", "apollo_state", str(exc)))
            return None

    @cached_property
    def apollo_state(self) -> State | None:
        """The Apollo cache of a 2019+ page (Apollo-2 or -3), or None (broken state is
        recorded); wrong-typed values met while reading it are recorded as errors."""
        data = self._apollo_cache
        return State.from_apollo(data, notes=self.note) if data is not None else None

    @cached_property
    def legacy(self) -> dict[str, Any] | None:
        """The raw ``{value, references}`` payload of a 2015–2018 page, or None."""
        try:
            return find_legacy_state(self._text_unless_bytes(), self._utf8_body)
        except StateError as exc:
            self.error(f"broken legacy state: {exc}")
            self.signals.append(FetchAgain("broken_state", "legacy_state", str(exc)))
            return None

    @cached_property
    def legacy_state(self) -> State | None:
        """The ``{value, references}`` payload of a 2015–2018 page as a :class:`State`."""
        payload = self.legacy
        return State.from_payload(payload, notes=self.note) if payload is not None else None

    @property
    def state(self) -> State | None:
        """The page's embedded state: the Apollo cache, else the legacy payload, else None."""
        return self.apollo_state or self.legacy_state

    @cached_property
    def medium_domains(self) -> frozenset[str]:
        """Custom domains that this page's own state declares as Medium publications."""
        domains: set[str] = set()
        state = self.state
        for entity in state.entities("Collection", "Publication") if state is not None else ():
            domains.add((entity.str("domain") or "").lower())
        return frozenset(d for d in domains if d and not is_medium_domain(d))

    def classify(self, href: str) -> MediumLink | None:
        """:func:`~topics_crawler.urls.classify_url` of a link on this page: relative links
        resolve against the page URL, and the page's declared custom domains count as Medium."""
        return classify_url(href, base=self.url, custom_domains=self.medium_domains)
