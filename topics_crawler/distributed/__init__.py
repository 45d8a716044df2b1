"""Distributed crawling on a shared Redis (scrapy-redis): queue, seen-set, item dedupe, workers.

Loaded only when ``REDIS_URL`` is set (see :mod:`topics_crawler.distributed.addon`).
Every worker runs the same command; they share, under ``<REDIS_KEY_PREFIX>:``
(``topics_crawler`` unless set; give two separate crawls on one Redis two prefixes):

* ``requests`` – the priority queue of requests (scrapy-redis ``PriorityQueue``);
* ``seen`` – the request fingerprints ever scheduled (canonical URL fingerprints);
* ``items`` – the item dedupe state (entity key → content hashes);
* ``worker:<id>`` – one short-lived key per live worker, ``busy`` or ``idle``.

The last worker to leave an idle, empty crawl deletes them, so the next crawl
with the same command starts afresh.
"""
