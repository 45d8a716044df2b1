"""The crawl marker: telling a new crawl from a Redis that came back empty.

The first worker of a crawl sets ``<prefix>:crawl`` to a new crawl id; the
others join it; every worker writes the id to its machine's local state
(:func:`~topics_crawler.distributed.local_state.remember_crawl`); the last
worker of a finished crawl sets the marker to ``<id> finished`` and each
finished worker forgets the id locally.

Redis without persistence that restarts loses the queue, the seen-set and the
marker. Starting over would fetch and export everything again, so:

* a worker starting where the local state names a crawl that Redis has no
  marker for stops with one line (:func:`lost_crawl`), unless
  ``DISTRIBUTED_RESTART`` is set (then it starts a new crawl);
* a running worker whose crawl's marker disappears (its Redis client
  reconnected to an empty server) stops with one line, reason ``redis_emptied``.

A finished crawl stays finished: a worker started while the marker says finished
(restarted after a kill, or once more by a scheduler) has nothing to do — it settles
its own state (cuts its feeds back to its last checkpoint, forgets the crawl), says so
in one line and exits 0 without fetching (:func:`finished_crawl`). ``DISTRIBUTED_RESTART``
starts a new crawl instead.
"""

from __future__ import annotations

import uuid

import redis
from scrapy.settings import BaseSettings

from topics_crawler.distributed.connection import RedisKeys, redact
from topics_crawler.distributed.local_state import joined_crawl, state_dir

FINISHED = " finished"
EMPTIED_REASON = "redis_emptied"

# KEYS: marker. ARGV: a new crawl id, "1" to start a new crawl over a finished one.
# Returns the marker of the crawl to join (a finished one ends with " finished").
_JOIN = """
local current = redis.call('GET', KEYS[1])
if current then
  local finished = string.find(current, ' finished', 1, true)
  if not finished or ARGV[2] ~= '1' then return current end
end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]
"""


def join_crawl(server: redis.Redis, keys: RedisKeys, *, restart: bool = False) -> str:
    """The marker of the running crawl, a new one when there is none; a finished crawl's
    (ending with :data:`FINISHED`) unless ``restart``, which starts a new one over it."""
    args = [uuid.uuid4().hex, "1" if restart else "0"]
    crawl_id = server.register_script(_JOIN)(keys=[keys.marker], args=args)
    return crawl_id.decode() if isinstance(crawl_id, bytes) else str(crawl_id)


def finished_crawl(settings: BaseSettings, server: redis.Redis) -> str | None:
    """The one line saying the crawl this worker would join has finished (nothing to do),
    or None (running, none yet, or ``DISTRIBUTED_RESTART``)."""
    if settings.getbool("DISTRIBUTED_RESTART"):
        return None
    marker = marker_value(server, RedisKeys.from_settings(settings))
    if marker is None or not marker.endswith(FINISHED):
        return None
    return finished_line(settings, marker.removesuffix(FINISHED))


def finished_line(settings: BaseSettings, crawl_id: str) -> str:
    return (
        f"Crawl {crawl_id} on Redis at {redact(settings['REDIS_URL'])} has finished: nothing "
        "to do (-s DISTRIBUTED_RESTART=1 starts a new crawl)"
    )


def marker_value(server: redis.Redis, keys: RedisKeys) -> str | None:
    value = server.get(keys.marker)
    return value.decode() if isinstance(value, bytes) else value


def lost_crawl(settings: BaseSettings, server: redis.Redis) -> str | None:
    """Why this worker must not start (Redis lost the crawl it joined), or None."""
    if settings.getbool("DISTRIBUTED_RESTART"):
        return None
    keys = RedisKeys.from_settings(settings)
    joined = joined_crawl(state_dir(settings))
    if joined is None or marker_value(server, keys) is not None:
        return None
    return (
        f"Redis at {redact(settings['REDIS_URL'])} has no marker for crawl {joined} "
        f"({keys.marker}): it restarted empty and lost the queue and seen-set. Not "
        "starting over (everything would be fetched and exported again); run with "
        "-s DISTRIBUTED_RESTART=1 to start the crawl afresh"
    )


def mark_finished(server: redis.Redis, keys: RedisKeys, crawl_id: str) -> None:
    server.set(keys.marker, crawl_id + FINISHED)
