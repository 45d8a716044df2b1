"""The facts of a tag-archive page, read straight from its payload, to check the parser by.

Each fact is one value of the page a dataset should carry, read here with nothing but
``json`` from the ``window["obvInit"]({...})`` payload — not through the project's state
reader or parser — so the parser is checked against an independent reading:

* per listed story (stream order): id, URL (rebuilt: the publication's custom domain, else
  ``medium.com/<slug>``, else ``medium.com/@<user>``, then ``uniqueSlug``), title, subtitle,
  author id, publication id, first published (UTC, second), claps (``totalClapCount``),
  responses, reading time, word count, tags, member-only, language, preview image id, and the
  original's URL when the story is a cross-post (``canonicalUrl`` / ``webCanonicalUrl`` off
  Medium: ``canonical_url``);
* per author of a listed story: id, username, name, member;
* per publication of a listed story: id, slug, name, domain, followers;
* per ``archiveIndex`` bucket (yearly, monthly, daily): its date and ``hasStories``;
* the next page's number, when ``paging.next`` names one.

    python -m tests.archive_facts     # facts right per archive fixture, real and own
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from tests.fixture_cases import Case, discover
from topics_crawler.items import Author, Publication, Story
from topics_crawler.pages import PageResult

_START = 'window["obvInit"]('
Facts = dict[str, Any]


def payload_of(html: str) -> dict[str, Any]:
    """The archive payload of a page."""
    start = html.index(_START) + len(_START)
    value, _ = json.JSONDecoder().raw_decode(html[start:])
    return value


def _empty(value: Any) -> Any:
    return None if value in ("", None) else value


def _utc(ms: Any) -> str:
    moment = datetime.fromtimestamp(int(ms) // 1000, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def expected_facts(html: str) -> Facts:
    """Every fact of the page (see the module docstring), keyed ``<what>/<id>/<field>``."""
    payload = payload_of(html)
    refs = payload["references"]
    posts, users, collections = (
        refs.get("Post", {}),
        refs.get("User", {}),
        refs.get("Collection", {}),
    )
    facts: Facts = {}
    listed = [i["postPreview"]["postId"] for i in payload["streamItems"] if "postPreview" in i]
    authors, publications = [], []
    for post_id in listed:
        post = posts[post_id]
        virtuals = post["virtuals"]
        user = users[post["creatorId"]]
        collection = collections.get(post["homeCollectionId"])
        if collection is not None and collection.get("domain"):
            home = f"https://{collection['domain']}"
        elif collection is not None:
            home = f"https://medium.com/{collection['slug']}"
        else:
            home = f"https://medium.com/@{user['username']}"
        image = virtuals.get("previewImage", {}).get("imageId")
        story = {
            "url": f"{home}/{post['uniqueSlug']}",
            "title": post["title"],
            "subtitle": _empty(virtuals.get("subtitle")),
            "author_id": post["creatorId"],
            "publication_id": _empty(post["homeCollectionId"]),
            "published_at": _utc(post["firstPublishedAt"]),
            "claps": int(virtuals["totalClapCount"]),
            "responses": int(virtuals["responsesCreatedCount"]),
            "reading_time_min": virtuals["readingTime"],
            "word_count": virtuals["wordCount"],
            "tags": [t["slug"] for t in virtuals["tags"]],
            "is_member_only": post["isSubscriptionLocked"],
            "language": post["detectedLanguage"],
            "image_id": _empty(image),
            "canonical_url": _off_medium(post.get("canonicalUrl"), post.get("webCanonicalUrl")),
        }
        facts.update({f"story/{post_id}/{name}": value for name, value in story.items()})
        if user["userId"] not in authors:
            authors.append(user["userId"])
        if collection is not None and collection["id"] not in publications:
            publications.append(collection["id"])
    facts["stories"] = listed
    for user_id in authors:
        user = users[user_id]
        facts[f"author/{user_id}/username"] = user["username"]
        facts[f"author/{user_id}/name"] = user["name"]
        facts[f"author/{user_id}/is_member"] = user.get("mediumMemberAt", 0) > 0
    for collection_id in publications:
        collection = collections[collection_id]
        facts[f"publication/{collection_id}/slug"] = collection["slug"]
        facts[f"publication/{collection_id}/name"] = collection["name"]
        facts[f"publication/{collection_id}/domain"] = _empty(collection.get("domain"))
        facts[f"publication/{collection_id}/followers"] = collection["metadata"]["followerCount"]
    index = payload["archiveIndex"]
    for member in ("yearlyBuckets", "monthlyBuckets", "dailyBuckets"):
        for bucket in index.get(member, []):
            date = "-".join(p for p in (bucket["year"], bucket["month"], bucket["day"]) if p)
            facts[f"bucket/{date}"] = bucket["hasStories"]
    following = payload.get("paging", {}).get("next")
    if following:
        facts["next_page"] = int(following["page"])
    return facts


def _off_medium(*urls: Any) -> str | None:
    """The first URL given that is on another site than Medium (a cross-post's original)."""
    for url in urls:
        host = urlsplit(url).hostname or "" if isinstance(url, str) and url else ""
        if host and host != "medium.com" and not host.endswith(".medium.com"):
            return str(url)
    return None


_IMAGE_RE = re.compile(r"/([^/]+)$")


def parsed_facts(result: PageResult) -> Facts:
    """The same facts as the parser gave them."""
    facts: Facts = {}
    stories = [s for s in result.items if isinstance(s, Story)]
    for story in stories:
        image = _IMAGE_RE.search(story.image_url).group(1) if story.image_url else None
        values = {
            "url": story.url, "title": story.title, "subtitle": story.subtitle,
            "author_id": story.author_id, "publication_id": story.publication_id,
            "published_at": story.published_at, "claps": story.claps,
            "responses": story.responses, "reading_time_min": story.reading_time_min,
            "word_count": story.word_count, "tags": story.tags,
            "is_member_only": story.is_member_only, "language": story.language,
            "image_id": image, "canonical_url": story.canonical_url,
        }  # fmt: skip
        facts.update({f"story/{story.story_id}/{name}": v for name, v in values.items()})
    facts["stories"] = [s.story_id for s in stories]
    for author in (a for a in result.items if isinstance(a, Author)):
        facts[f"author/{author.author_id}/username"] = author.username
        facts[f"author/{author.author_id}/name"] = author.name
        facts[f"author/{author.author_id}/is_member"] = author.is_member
    for publication in (p for p in result.items if isinstance(p, Publication)):
        key = f"publication/{publication.publication_id}"
        facts[f"{key}/slug"] = publication.slug
        facts[f"{key}/name"] = publication.name
        facts[f"{key}/domain"] = publication.domain
        facts[f"{key}/followers"] = publication.followers
    for cursor in result.cursors:
        if cursor.listing.startswith("archive_") and cursor.listing != "archive_page":
            parts = (cursor.cursor.get(k, "") for k in ("year", "month", "day"))
            facts[f"bucket/{'-'.join(p for p in parts if p)}"] = cursor.cursor.get("hasStories")
        if cursor.listing == "archive_page":
            facts["next_page"] = int(cursor.cursor["page"])
    return facts


def score(case: Case) -> tuple[int, int, list[str]]:
    """``(facts right, facts, wrong keys)`` of one fixture case."""
    html = case.input_bytes().decode("utf-8")
    expected = expected_facts(html)
    got = parsed_facts(case.run())
    wrong = [key for key, value in expected.items() if got.get(key) != value]
    return len(expected) - len(wrong), len(expected), wrong


def archive_cases() -> list[Case]:
    """The tag-archive fixture cases whose input is present (real, then own)."""
    cases = [c for c in discover("real") if "archive_tag_" in c.name]
    cases += [c for c in discover("own") if c.name.startswith("own/tag_archive/")]
    return [c for c in cases if c.input_path().exists()]


def main() -> int:
    total_right = total = 0
    for case in archive_cases():
        right, count, wrong = score(case)
        total_right, total = total_right + right, total + count
        print(
            f"{case.name}: {right} of {count} facts right" + (f" (wrong: {wrong})" if wrong else "")
        )
    print(f"all: {total_right} of {total} facts right")
    return 0 if total_right == total else 1


if __name__ == "__main__":
    raise SystemExit(main())
