"""Exceptions shared across components."""


class CrawlNotStarted(Exception):
    """The crawl cannot start as configured (an unwritable ``DATASET_DIR``, Redis not
    answering, a resume that would overwrite output…); the message says why and what
    to do. Add-ons raise it from ``preflight(settings)``, which ``scrapy crawl`` runs
    before anything starts."""
