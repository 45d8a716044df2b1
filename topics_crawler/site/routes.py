"""URL routing of the local site: a request path in, a status, headers and body out.

Paths are those of medium.com (``/tag/<slug>``, ``/feed/tag/<slug>``, ``/@user``,
``/@user/<slug>-<id>``, ``/<pub>``, ``/<pub>/<slug>-<id>``, ``/p/<id>``); pages of other
hosts (custom domains) live under ``/_host/<host>/<path>``, the way the crawler's mirror
middleware maps them. Pages are rendered from the content on every call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from topics_crawler.site.author_archive import JSON as ARCHIVE_JSON
from topics_crawler.site.author_archive import legacy_profile_page, stream_answer
from topics_crawler.site.day_archive import archive_answer, parse_archive_path
from topics_crawler.site.entities import SiteStory
from topics_crawler.site.feed import user_feed
from topics_crawler.site.feeds import XML as FEED_XML
from topics_crawler.site.feeds import tag_feed
from topics_crawler.site.graphql import graphql_response
from topics_crawler.site.images import IMAGE_HOSTS, image_answer
from topics_crawler.site.model import SiteContent
from topics_crawler.site.render import author_page, publication_page, robots_txt, story_page
from topics_crawler.site.tag_page import tag_page

HTML = "text/html; charset=utf-8"
_STORY_ID_RE = re.compile(r"-([0-9a-f]{12})$")
_HOST_PREFIX = "/_host/"


@dataclass
class Response:
    """What the server sends back for one path."""

    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


def html(text: str) -> Response:
    return Response(200, text.encode("utf-8"), {"Content-Type": HTML})


def not_found(path: str) -> Response:
    body = f"<!DOCTYPE html><html><body><h1>404</h1><p>No page at {path}</p></body></html>"
    return Response(404, body.encode("utf-8"), {"Content-Type": HTML})


def redirect(location: str) -> Response:
    return Response(301, b"", {"Location": location, "Content-Type": HTML})


def resolve(content: SiteContent, raw_path: str, member: bool = False) -> Response:
    """The response for ``raw_path`` (query string ignored, like Medium's tracking, except
    by the profile stream of author archives)."""
    stream = stream_answer(content, raw_path)
    if stream is not None:
        return Response(stream[0], stream[1], {"Content-Type": ARCHIVE_JSON})
    archive = _tag_archive(content, raw_path)
    if archive is not None:
        return archive
    path = unquote(urlsplit(raw_path).path) or "/"
    if path.startswith(_HOST_PREFIX):
        host, _, rest = path[len(_HOST_PREFIX) :].partition("/")
        return _on_host(content, host.lower(), "/" + rest, path, member)
    return _on_medium(content, path, member)


def resolve_post(content: SiteContent, raw_path: str, body: bytes) -> Response:
    """The response to a POST: only ``/_/graphql`` takes them (see site/graphql.py)."""
    if urlsplit(raw_path).path != "/_/graphql":
        return Response(405, b"", {"Allow": "GET, HEAD", "Content-Type": HTML})
    status, payload, headers = graphql_response(content, body)
    return Response(status, payload, headers)


def _tag_archive(content: SiteContent, raw_path: str) -> Response | None:
    """A tag's archive page (``topics_crawler/site/day_archive.py``; ``?page=N`` read), or None."""
    try:
        address = parse_archive_path(raw_path)
    except ValueError:
        return not_found(urlsplit(raw_path).path)
    if address is None:
        return None
    answer = archive_answer(content, address)
    if answer.status == 302:
        return Response(302, b"", {"Location": answer.location, "Content-Type": HTML})
    if answer.status != 200:
        return not_found(urlsplit(raw_path).path)
    return html(answer.html)


def moved_page(host: str, path: str) -> str:
    """What a custom domain that left Medium answers now: a WordPress page of its own."""
    title = path.strip("/").rsplit("-", 1)[0].replace("-", " ").capitalize() or host
    return (
        '<!DOCTYPE html><html lang="en-US"><head><meta charset="UTF-8">'
        f"<title>{title} | {host}</title>"
        '<meta name="generator" content="WordPress 6.8.1">'
        f'<meta property="og:site_name" content="{host}"><meta property="og:type" '
        f'content="article"></head><body class="wp-singular"><article><h1>{title}</h1>'
        "<p>This site moved to its own platform.</p></article></body></html>"
    )


def _on_medium(content: SiteContent, path: str, member: bool = False) -> Response:
    segments = [s for s in path.split("/") if s]
    if path == "/robots.txt":
        return Response(200, robots_txt().encode(), {"Content-Type": "text/plain; charset=utf-8"})
    if segments[:2] == ["feed", "tag"] and len(segments) == 3 and segments[2] in content.tags:
        body = tag_feed(content, content.tags[segments[2]]).encode("utf-8")
        return Response(200, body, {"Content-Type": FEED_XML})
    if len(segments) == 2 and segments[0] == "tag" and segments[1] in content.tags:
        return html(tag_page(content, content.tags[segments[1]]))
    if len(segments) == 2 and segments[0] == "feed" and segments[1].startswith("@"):
        author = content.authors.get(segments[1][1:])
        if author is None:
            return not_found(path)
        feed = user_feed(content, author).encode("utf-8")
        return Response(200, feed, {"Content-Type": "text/xml; charset=UTF-8"})
    if len(segments) == 2 and segments[0] == "p":
        story = content.stories.get(segments[1])
        return redirect(content.story_path(story)) if story else not_found(path)
    if len(segments) == 1 and segments[0].startswith("@"):
        author = content.authors.get(segments[0][1:])
        if author is None:
            return not_found(path)
        archive = content.author_archives.get(author.username)
        if archive is not None and archive.form == "stream":
            return html(legacy_profile_page(content, author))
        return html(author_page(content, author))
    if len(segments) == 1 and segments[0] in content.publications:
        publication = content.publications[segments[0]]
        if publication.domain:
            return redirect(publication.path)
        return html(publication_page(content, publication))
    if len(segments) == 2:
        return _story(content, _story_by_path(content, segments[1]), path, member)
    return not_found(path)


def _on_host(
    content: SiteContent, host: str, rest: str, path: str, member: bool = False
) -> Response:
    if host == "medium.com":
        return _on_medium(content, rest, member)
    if host in IMAGE_HOSTS:
        status, body, content_type = image_answer(rest)
        return Response(status, body, {"Content-Type": content_type})
    if host in content.left_medium and rest != "/robots.txt":
        return html(moved_page(host, rest))
    publication = next((p for p in content.publications.values() if p.domain == host), None)
    if publication is None:
        return not_found(path)
    segments = [s for s in rest.split("/") if s]
    if rest == "/robots.txt":
        return Response(200, robots_txt().encode(), {"Content-Type": "text/plain; charset=utf-8"})
    if not segments:
        return html(publication_page(content, publication))
    if len(segments) == 1:
        return _story(content, _story_by_path(content, segments[0]), path, member)
    return not_found(path)


def _story_by_path(content: SiteContent, last_segment: str) -> SiteStory | None:
    match = _STORY_ID_RE.search(last_segment)
    return content.stories.get(match.group(1)) if match else None


def _story(
    content: SiteContent, story: SiteStory | None, path: str, member: bool = False
) -> Response:
    """The story page at its own path (whole for a ``member``'s session); other paths with
    its id redirect there."""
    if story is None:
        return not_found(path)
    own_path = content.story_path(story)
    if path.rstrip("/") != own_path:
        return redirect(own_path)
    return html(story_page(content, story, member=member))
