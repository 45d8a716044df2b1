"""The one exception the dataset code raises for a dataset directory it cannot use."""

from topics_crawler.errors import CrawlNotStarted


class DatasetError(CrawlNotStarted):
    """A dataset directory that cannot be written, read or upgraded; the message says why."""
