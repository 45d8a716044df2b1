"""Strict reading of one ``PostResponsesQuery`` answer: response rows, or why it is unusable.

No real body of this operation exists to check against (see docs/responses.md), so
nothing is taken on trust. The envelope (``[0].data.post.threadedPostResponses``)
must be there with the right types, the post must be the story asked about, and a
paging cursor that comes back is refused: any of these makes the whole answer a
:class:`ResponsesFailure`. Inside a valid answer each response is checked on its
own: one that is not a ``Post`` object, has no hex id, or claims to answer another
post than the one it is listed under is skipped with a reason (``skipped``), its
thread with it; a *deleted* response (a post without a creator) gives no row but
keeps its replies, which still name it as their parent. :func:`read_responses`
never raises.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from topics_crawler.items import StoryResponse
from topics_crawler.normalize import clean_text, parse_timestamp
from topics_crawler.pages.state import StateError, parse_json_payload

FailureReason = Literal[
    "not_json",
    "not_a_batch",
    "graphql_errors",
    "post_not_found",
    "wrong_post",
    "missing_field",
    "wrong_type",
    "repeated_cursor",
]
_POST_ID = re.compile(r"[0-9a-f]{8,16}")
_MAX_MESSAGES = 3


@dataclass(frozen=True)
class ResponsesPage:
    """One valid page: its response rows in thread order (a response, then its replies)."""

    rows: list[StoryResponse] = field(default_factory=list)
    next_to: str | None = None
    """The ``to`` cursor of the next page (None: no more top-level responses)."""
    total: int | None = None
    """``postResponses.count`` as the answer states it."""
    top_level: int = 0
    """Top-level responses listed on this page (rows or not)."""
    deleted: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    """Responses left out, by reason (``wrong_parent``, ``bad_id``, ``wrong_type``…)."""


@dataclass(frozen=True)
class ResponsesFailure:
    """Why an answer cannot be used: ``reason`` (stats key) and ``detail`` (log text)."""

    reason: FailureReason
    detail: str


class _ShapeError(Exception):
    def __init__(self, reason: FailureReason, detail: str) -> None:
        super().__init__(detail)
        self.failure = ResponsesFailure(reason, detail)


def read_responses(
    body: bytes | str,
    story_id: str,
    scraped_at: str,
    *,
    seen_cursors: Collection[str] = (),
    limit: int | None = None,
) -> ResponsesPage | ResponsesFailure:
    """The response rows of an answer about ``story_id`` (at most ``limit`` rows)."""
    try:
        post = _post(_first_result(_decode(body)), story_id)
        connection = _member(post, "threadedPostResponses", dict, "data.post.")
        posts = _member(connection, "posts", list, "data.post.threadedPostResponses.")
        next_to = _next_cursor(connection, seen_cursors)
    except _ShapeError as problem:
        return problem.failure
    walk = _Walk(story_id, scraped_at, limit)
    for entry in posts:
        walk.visit(entry, story_id, 1)
    total = _count(post.get("postResponses"))
    return ResponsesPage(walk.rows, next_to, total, len(posts), walk.deleted, walk.skipped)


def _decode(body: bytes | str) -> Any:
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    try:
        return parse_json_payload(text)
    except StateError as exc:
        raise _ShapeError("not_json", f"response is not JSON: {exc}") from None


def _first_result(batch: Any) -> dict[str, Any]:
    if isinstance(batch, dict) and batch.get("errors"):
        _raise_for_errors(batch)
    if not isinstance(batch, list) or not batch or not isinstance(batch[0], dict):
        raise _ShapeError("not_a_batch", f"expected a JSON array of results, got {_kind(batch)}")
    _raise_for_errors(batch[0])
    return batch[0]


def _raise_for_errors(result: dict[str, Any]) -> None:
    errors = result.get("errors")
    if errors is None or errors == []:
        return
    if not isinstance(errors, list):
        raise _ShapeError("wrong_type", f"errors is {_kind(errors)}, not an array")
    messages = []
    for error in errors[:_MAX_MESSAGES]:
        message = error.get("message") if isinstance(error, dict) else None
        messages.append(message.strip()[:200] if isinstance(message, str) else repr(error))
    raise _ShapeError("graphql_errors", "endpoint answered errors: " + "; ".join(messages))


def _post(result: dict[str, Any], story_id: str) -> dict[str, Any]:
    data = _member(result, "data", dict, "")
    if "post" not in data:
        raise _ShapeError("missing_field", "data.post is missing")
    if data["post"] is None:
        raise _ShapeError("post_not_found", f"data.post is null (no post {story_id})")
    post = _member(data, "post", dict, "data.")
    if post.get("__typename", "Post") != "Post":
        raise _ShapeError("wrong_type", f"data.post is a {post.get('__typename')}, not a Post")
    if post.get("id") != story_id:
        raise _ShapeError("wrong_post", f"data.post.id is {post.get('id')!r}, not {story_id!r}")
    return post


def _next_cursor(connection: dict[str, Any], seen: Collection[str]) -> str | None:
    where = "data.post.threadedPostResponses.pagingInfo"
    paging = connection.get("pagingInfo")
    if paging is None:
        return None
    if not isinstance(paging, dict):
        raise _ShapeError("wrong_type", f"{where} is {_kind(paging)}, not an object")
    following = paging.get("next")
    if following is None:
        return None
    if not isinstance(following, dict):
        raise _ShapeError("wrong_type", f"{where}.next is {_kind(following)}, not an object")
    to = following.get("to")
    if not isinstance(to, str) or not to:
        raise _ShapeError("missing_field", f"{where}.next.to is {_kind(to)}, not a cursor")
    if to in seen:
        raise _ShapeError("repeated_cursor", f"cursor {to[:40]!r} came back (paging loop)")
    return to


class _Walk:
    """Depth-first over one page's threads, collecting rows until ``limit``."""

    def __init__(self, story_id: str, scraped_at: str, limit: int | None) -> None:
        self.story_id = story_id
        self.scraped_at = scraped_at
        self.limit = limit
        self.rows: list[StoryResponse] = []
        self.deleted = 0
        self.skipped: Counter[str] = Counter()

    def full(self) -> bool:
        return self.limit is not None and len(self.rows) >= self.limit

    def visit(self, entry: Any, parent_id: str, depth: int) -> None:
        if self.full():
            return
        reason = _invalid(entry, parent_id)
        if reason is not None:
            self.skipped[reason] += 1
            return
        response_id = entry["id"]
        if entry.get("creator") is None:
            self.deleted += 1
        else:
            self.rows.append(self._row(entry, parent_id, depth))
        for reply in _replies(entry, self.skipped):
            self.visit(reply, response_id, depth + 1)

    def _row(self, entry: dict[str, Any], parent_id: str, depth: int) -> StoryResponse:
        creator = entry.get("creator")
        creator = creator if isinstance(creator, dict) else {}
        content = entry.get("content")
        content = content if isinstance(content, dict) else {}
        locked = entry.get("isLocked")
        preview = content.get("isLockedPreviewOnly")
        text = _text(content.get("bodyModel"))
        return StoryResponse(
            response_id=entry["id"],
            story_id=self.story_id,
            parent_id=parent_id,
            depth=depth,
            url=_str(entry.get("mediumUrl")),
            author_id=_str(creator.get("id")),
            author_username=_str(creator.get("username")),
            author_name=clean_text(_str(creator.get("name"))),
            text=text,
            text_is_preview=preview if isinstance(preview, bool) and text else None,
            is_member_only=locked if isinstance(locked, bool) else None,
            claps=_count_value(entry.get("clapCount")),
            published_at=parse_timestamp(entry.get("firstPublishedAt"))[0],
            scraped_at=self.scraped_at,
        )


def _invalid(entry: Any, parent_id: str) -> str | None:
    """Why ``entry`` cannot be a response to ``parent_id`` (None: it can)."""
    if entry is None:
        return "null_entry"
    if not isinstance(entry, dict) or entry.get("__typename", "Post") != "Post":
        return "wrong_type"
    response_id = entry.get("id")
    if not isinstance(response_id, str) or not _POST_ID.fullmatch(response_id):
        return "bad_id"
    answered = entry.get("inResponseToPostResult")
    answered_id = answered.get("id") if isinstance(answered, dict) else None
    if answered_id != parent_id:
        return "wrong_parent"
    kind = entry.get("inResponseToEntityType")
    if kind is not None and kind != "POST":
        return "wrong_parent"
    return None


def _replies(entry: dict[str, Any], skipped: Counter[str]) -> Iterator[Any]:
    thread = entry.get("threadedPostResponses")
    if thread is None:
        return iter(())
    posts = thread.get("posts") if isinstance(thread, dict) else None
    if not isinstance(posts, list):
        skipped["wrong_type_replies"] += 1
        return iter(())
    return iter(posts)


def _text(body_model: Any) -> str | None:
    paragraphs = body_model.get("paragraphs") if isinstance(body_model, dict) else None
    if not isinstance(paragraphs, list):
        return None
    texts = [
        clean_text(p.get("text"))
        for p in paragraphs
        if isinstance(p, dict) and isinstance(p.get("text"), str)
    ]
    joined = "\n\n".join(text for text in texts if text)
    return joined or None


def _count(value: Any) -> int | None:
    return _count_value(value.get("count")) if isinstance(value, dict) else None


def _count_value(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _member(container: dict[str, Any], name: str, expected: type, where: str) -> Any:
    if name not in container or container[name] is None:
        raise _ShapeError("missing_field", f"{where}{name} is missing")
    value = container[name]
    if not isinstance(value, expected):
        raise _ShapeError("wrong_type", f"{where}{name} is {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    return "null" if value is None else names.get(type(value), f"a {type(value).__name__}")
