"""One reader of Medium's normalized state, for every parser.

Medium's embedded data is a GraphQL cache whose model (typenames, ids, field
names) is stable across page generations while its keys' argument strings are
not. Every parser reads it through this package, never by indexing raw JSON.

Sources, each turned into a :class:`State`::

    State.from_apollo(cache)        # window.__APOLLO_STATE__, Apollo-2 or Apollo-3
    State.from_payload(payload)     # GLOBALS.embedded / obvInit(...) / ?format=json payload
    State.from_response(body)       # GraphQL response: {"data": …} or a batch array of them
    doc.state                       # the page's state (Apollo first, then legacy), or None

Entities (typename + id; references in both forms are followed everywhere)::

    state.entity("Post", "c9700a7cf36d")   -> Node | None
    state.entities("Collection", "Publication") -> Iterator[Node]
    state.root                              -> Node   (ROOT_QUERY / payload / data)
    state.roots                             -> list[Node] (one per batch result)

Fields of a :class:`Node` — typed; a value of the wrong type is None (or ``[]``)
plus a note in the page's errors, never an exception::

    node.str("title")  node.int("clapCount")  node.float("readingTime")
    node.bool("isLocked")  node.scalar("followerCount")   # str | int | float | bool
    node.node("creator")  node.dig("content", "bodyModel")  # -> Node | None
    node.nodes("tags")  node.list("items")  node.strs("ids")  node.ref("creator")
    node.typename  node.id  node.key  node.has("name")  node.value("raw JSON")
    node.objects("author")  node.texts("@type")   # one or a list (JSON-LD): -> list

A field name matches the plain field and every call of it, whatever its
arguments and key form (``f({"json"})``, ``f:{json}``, ``f:(k:v,…)``)::

    for call in state.root.calls("tagFeed"):       # Call(name, args, key, node, nodes, raw)
        call.args["mode"], call.node.nodes("items")
    user.call("homepagePostsConnection", best=lambda c: len(c.node.nodes("posts")) if c.node else 0)
    state.root.call("userResult", lambda args: args.get("username") == "ann")

Nothing recurses over the data: references are followed a bounded number of
hops, a GraphQL body is walked to a bounded depth, and JSON too deep to decode
is a :class:`StateError` (recorded on the page), never a ``RecursionError``.
"""

from __future__ import annotations

from topics_crawler.pages.state.decode import (
    StateError,
    decode_after,
    find_apollo_state,
    find_legacy_state,
    load_json,
    parse_json_payload,
    strip_xssi,
)
from topics_crawler.pages.state.keys import split_field_key
from topics_crawler.pages.state.node import Call, Node
from topics_crawler.pages.state.reader import State
from topics_crawler.pages.state.values import kind_of, reference_key

__all__ = [
    "Call",
    "Node",
    "State",
    "StateError",
    "decode_after",
    "find_apollo_state",
    "find_legacy_state",
    "kind_of",
    "load_json",
    "parse_json_payload",
    "reference_key",
    "split_field_key",
    "strip_xssi",
]
