"""Crash-safe ``JOBDIR``: a crawl killed with SIGKILL resumes where it stood.

Scrapy's own ``JOBDIR`` queue and seen-file are only consistent after a clean stop.
Here one SQLite journal (``<JOBDIR>/journal.sqlite``) holds, in a single transaction
committed every ``RESUME_CHECKPOINT_INTERVAL`` seconds:

* every scheduled request (the seen-set) with its serialized request until it is done;
* which pages are *done*: downloaded, parsed, and all their items through the
  pipelines and written to the feeds;
* the dedupe pipeline's state (what was exported);
* the size of each local feed file, flushed just before the commit.

A kill loses at most the work since the last checkpoint. On restart the feed files are
cut back to their checkpointed size, pending requests (those not done) are scheduled
again, and done pages are never fetched again, so the finished output holds each item
once — the same set an uninterrupted crawl exports. Feeds must append (``-o``, or
``overwrite: false``) and be JSON lines to be cut back line-exactly.
"""
