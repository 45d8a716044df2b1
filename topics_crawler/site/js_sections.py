"""The local site with JavaScript: parts of pages that exist only after scripts run.

    SiteServer(default_site(), js_sections=True)  # python -m topics_crawler.site --js-sections
    SiteServer(content, js_sections=JsSections(shell_stories=frozenset({story_id}),
                                               challenge_paths=frozenset({"/@ada"})))

With it on, a tag page's server HTML keeps the header, sub-topics and its
sections except "Recommended stories", and only the first ``first_latest``
cards of "Latest stories"; a script then fetches ``/_/api/tag-sections/<slug>``
(JSON with the "Recommended stories" and "Who to follow" sections as HTML),
and adds a "See more stories" button that — like scrolling to the bottom —
appends ``page_size`` more cards from ``/_/api/tag-sections/<slug>/more?after=N``
(the rest of "Latest stories", then every other story of the tag, newest
first). A plain fetch sees none of that.

Also: the pages of ``shell_stories`` are script shells that fetch their real
HTML (``/_/api/story-page/<id>``) and write it into the document, and
``challenge_paths`` answer Cloudflare's managed challenge (403, ``cf-mitigated:
challenge``, :func:`topics_crawler.site.refusals.challenge_page`) whose script sets a
``cf_clearance`` cookie and reloads, until a request carries that cookie.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from topics_crawler.site.cards import card
from topics_crawler.site.entities import SiteTag
from topics_crawler.site.markup import esc
from topics_crawler.site.model import SiteContent
from topics_crawler.site.refusals import CLEARANCE_COOKIE, challenge_page
from topics_crawler.site.render import story_page
from topics_crawler.site.routes import Response, html
from topics_crawler.site.tag_page import _section, _who_to_follow, tag_page

API = "/_/api/tag-sections/"
STORY_API = "/_/api/story-page/"
RECOMMENDED = "Recommended stories"
LATEST = "Latest stories"
_HOST = "medium.com"


@dataclass(frozen=True)
class JsSections:
    """What the scripts of the site add (see the module docstring)."""

    first_latest: int = 2
    """Cards of "Latest stories" in the server HTML; the rest come on "See more stories"."""
    page_size: int = 3
    """Cards one "See more stories" click (or scroll to the bottom) appends."""
    shell_stories: frozenset[str] = frozenset()
    """Story ids whose page is a script shell (no data without JavaScript)."""
    challenge_paths: frozenset[str] = frozenset()
    """Paths behind a self-clearing JS challenge."""


def resolve_js(
    options: JsSections, content: SiteContent, raw_path: str, cookie: str = ""
) -> Response | None:
    """The response for a path this module serves differently, or None for the plain one."""
    parts = urlsplit(raw_path)
    path = unquote(parts.path) or "/"
    if path in options.challenge_paths and f"{CLEARANCE_COOKIE}=" not in cookie:
        return challenge_page(path)
    if path.startswith(API):
        slug, _, rest = path[len(API) :].partition("/")
        tag = content.tags.get(slug)
        if tag is None or rest not in ("", "more"):
            return None
        if rest == "more":
            after = _int(parse_qs(parts.query).get("after", ["0"])[0])
            return _json(more_cards(content, tag, options, after))
        return _json(side_sections(content, tag))
    if path.startswith(STORY_API):
        story = content.stories.get(path[len(STORY_API) :])
        return _json({"html": story_page(content, story)}) if story else None
    segments = [s for s in path.split("/") if s]
    if len(segments) == 2 and segments[0] == "tag" and segments[1] in content.tags:
        return html(js_tag_page(content, content.tags[segments[1]], options))
    shell = next((sid for sid in options.shell_stories if _story_path(content, sid) == path), None)
    return html(story_shell(shell)) if shell else None


# --- tag pages -----------------------------------------------------------------------


def js_tag_page(content: SiteContent, tag: SiteTag, options: JsSections) -> str:
    """The tag page as the server sends it: what scripts add left out, the script added."""
    server_tag = replace(tag, sections=server_sections(tag, options), who_to_follow=[])
    page = tag_page(content, server_tag)
    see_more = f'<a href="/tag/{esc(tag.slug)}/archive">See more stories</a>'
    script = _TAG_SCRIPT.replace("__SLUG__", json.dumps(tag.slug)).replace(
        "__AFTER__", json.dumps(0 if more_pool(content, tag, options) else None)
    )
    return page.replace(see_more, "").replace("</body>", f"<script>{script}</script></body>", 1)


def server_sections(tag: SiteTag, options: JsSections) -> dict[str, list[str]]:
    """Sections in the server HTML: no "Recommended stories", "Latest stories" cut short."""
    sections = {h: ids for h, ids in tag.sections.items() if h != RECOMMENDED}
    if LATEST in sections:
        sections[LATEST] = sections[LATEST][: options.first_latest]
    return sections


def more_pool(content: SiteContent, tag: SiteTag, options: JsSections) -> list[str]:
    """Story ids "See more stories" appends, in order: the rest of "Latest stories", then
    the tag's other stories, newest first."""
    latest = tag.sections.get(LATEST, [])
    tagged = sorted(
        (s for s in content.stories.values() if any(t.slug == tag.slug for t in s.tags)),
        key=lambda story: story.published_at,
        reverse=True,
    )
    return [*latest[options.first_latest :], *(s.id for s in tagged if s.id not in latest)]


def more_cards(
    content: SiteContent, tag: SiteTag, options: JsSections, after: int
) -> dict[str, Any]:
    """``{"cards": html, "next": offset | null}``: one page of the pool from ``after``."""
    pool = more_pool(content, tag, options)
    chunk = pool[after : after + options.page_size]
    now = content.clock()
    cards = "".join(
        card(content, content.stories[sid], page_host=_HOST, placement="topic_page",
             position=after + i, now=now)
        for i, sid in enumerate(chunk, start=1)
    )  # fmt: skip
    following = after + len(chunk)
    return {"cards": cards, "next": following if following < len(pool) else None}


def side_sections(content: SiteContent, tag: SiteTag) -> dict[str, str | None]:
    """The sections only scripts show: "Recommended stories" and "Who to follow"."""
    recommended = tag.sections.get(RECOMMENDED)
    return {
        "recommended": _section(content, tag, RECOMMENDED, recommended) if recommended else None,
        "who_to_follow": _who_to_follow(content, tag) or None,
    }


_TAG_SCRIPT = """(() => {
  const api = "/_/api/tag-sections/" + encodeURIComponent(__SLUG__);
  const main = document.querySelector("main");
  const related = document.querySelector('[data-testid="related-tags"]');
  const latest = Array.from(document.querySelectorAll("section")).find(
    (section) => (section.querySelector("h2") || {}).textContent === "Latest stories");
  let after = __AFTER__;
  let loading = false;
  const button = document.createElement("button");
  button.textContent = "See more stories";
  const loadMore = async () => {
    if (loading || after === null) return;
    loading = true;
    const data = await (await fetch(api + "/more?after=" + after)).json();
    button.insertAdjacentHTML("beforebegin", data.cards);
    after = data.next;
    if (after === null) button.remove();
    loading = false;
  };
  button.addEventListener("click", loadMore);
  window.addEventListener("scroll", () => {
    const bottom = window.innerHeight + window.scrollY;
    if (bottom >= document.documentElement.scrollHeight - 200) loadMore();
  });
  const insert = (fragment) => {
    if (!fragment) return;
    if (related) related.insertAdjacentHTML("beforebegin", fragment);
    else main.insertAdjacentHTML("beforeend", fragment);
  };
  fetch(api).then((response) => response.json()).then((data) => {
    insert(data.recommended);
    insert(data.who_to_follow);
    if (latest && after !== null) latest.appendChild(button);
  });
})();"""


# --- script shells ----------------------------------------------------


def story_shell(story_id: str) -> str:
    """A story page with no data in it: a script fetches the real page and writes it."""
    return (
        "<!DOCTYPE html><html><head><title>Medium</title></head>"
        '<body><div id="root">Loading…</div><script>'
        f"fetch({json.dumps(STORY_API + story_id)}).then((r) => r.json()).then((data) => "
        "{ document.open(); document.write(data.html); document.close(); });"
        "</script></body></html>"
    )


def _story_path(content: SiteContent, story_id: str) -> str | None:
    story = content.stories.get(story_id)
    return content.story_path(story) if story else None


def _json(data: dict[str, Any]) -> Response:
    body = json.dumps(data).encode("utf-8")
    return Response(200, body, {"Content-Type": "application/json; charset=utf-8"})


def _int(text: str) -> int:
    return int(text) if text.isdigit() else 0
