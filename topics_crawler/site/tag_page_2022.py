"""A 2022 tag page: the app shell and its Apollo-3 state, no cards in the DOM.

Shaped like the shared 2022 capture (``tag_programming_apollo-state-only__…-2022.json``,
see STRUCTURE.md): ``ROOT_QUERY`` holds ``tagFromSlug({"tagSlug":…})`` → ``Tag``,
``tagFeaturesFromSlug(…)`` → an inline ``TagFeature``, ``relatedTags(…)`` → ``Tag``
references, ``tagTopWriters({"limit":…,"tagSlug":…})`` → ``User`` references and
``tagFeed:(mode:HOT,tagSlug:…,limit:…)`` (the non-JSON key form) → ``TagFeedResult``
whose ``TagFeedItem``s reference the posts. The HTML around it is the page's head and an
empty root the browser app would fill.
"""

from __future__ import annotations

from typing import Any

from topics_crawler.site.apollo import StateBuilder, ref, root_call
from topics_crawler.site.entities import SiteTag, TopicRef
from topics_crawler.site.markup import page
from topics_crawler.site.model import SiteContent

#: The 2022 capture's ``TagFeedItem.feedId`` shape; the value itself means nothing here.
_FEED_ID = "0b7e4c52-6f1d-4a3e-9c2b-5d8f0e1a2b3c"


def tag_page_2022(content: SiteContent, tag: SiteTag) -> str:
    """The 2022 page of ``tag``: every section's stories in one ``tagFeed`` (mode HOT)."""
    title = f"The most insightful stories about {tag.name} – Medium"
    return page(
        title=title,
        canonical=tag.url,
        properties={"og:type": "website", "og:title": title, "og:url": tag.url},
        names={"description": f"Read stories about {tag.name} on Medium."},
        json_ld=None,
        state=_state(content, tag),
        body="<main></main>",  # the app renders the page from the state
    )


def _state(content: SiteContent, tag: SiteTag) -> dict[str, Any]:
    state = StateBuilder(content)
    tag_key = state.tag_ref(TopicRef(tag.slug, tag.name))
    state.entities[tag_key]["postCount"] = tag.story_count
    state.query(root_call("tagFromSlug", tagSlug=tag.slug), ref(tag_key))
    state.query(
        root_call("tagFeaturesFromSlug", tagSlug=tag.slug),
        {
            "__typename": "TagFeature",
            "writerCount": tag.writers,
            "postCountLatest": len(tag.listed()),
            "writerCountLatest": len({content.stories[s].author for s in tag.listed()}),
        },
    )
    state.query(
        root_call("relatedTags", tagSlug=tag.slug),
        [ref(state.tag_ref(topic)) for topic in tag.related],
    )
    writers = [ref(state.user(content.authors[name])) for name in tag.top_writers]
    state.query(f'tagTopWriters({{"limit":{len(writers)},"tagSlug":"{tag.slug}"}})', writers)
    listed = tag.listed()
    items = [
        {
            "__typename": "TagFeedItem",
            "feedId": _FEED_ID,
            "reason": 84,
            "post": ref(state.post(content.stories[story_id], extended_preview=True)),
        }
        for story_id in listed
    ]
    feed_key = f"tagFeed:(mode:HOT,tagSlug:{tag.slug},limit:{len(listed)})"
    paging = {"__typename": "PageParams", "limit": len(listed), "to": str(len(listed))}
    state.query(
        feed_key,
        {
            "__typename": "TagFeedResult",
            "items": items,
            "pagingInfo": {"__typename": "Paging", "next": paging},
        },
    )
    state.query(root_call("collectionByDomainOrSlug", domainOrSlug="medium.com"), None)
    return state.to_dict()
