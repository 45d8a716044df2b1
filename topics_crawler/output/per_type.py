"""Feeds of one item type each: the ``%(item_type)s`` placeholder, and mixed tables refused.

A crawl yields several item types (``story``, ``author``, ``publication``, ``tag_page``,
``tag_edge``, ``tag_story``, ``response``) with different fields. A JSON lines feed holds
them all (each line names its ``item_type``); a table cannot: a CSV file takes its header
from the first item (a tag page), so every story row would lose its title, id and author,
and a Parquet file would be one wide table of every type's columns. So:

* ``%(item_type)s`` in a feed URI (``-O 'out/%(item_type)s.csv:csv'``) makes one feed per
  item type (``out/story.csv``, ``out/author.csv``, …), each limited to its type with
  Scrapy's own ``item_classes`` feed option (:func:`expand_feeds`); a type the crawl does
  not export gets no file. A Parquet feed of one type also gets that type's schema
  (``item_export_kwargs.item_class``), not the wide one.
* a CSV or Parquet feed that would receive several item types — no ``%(item_type)s``, no
  ``item_classes`` naming one type, no ``fields`` choosing the columns — is refused before
  the crawl starts, with one line naming the per-type form (:func:`mixed_feed_error`;
  ``scrapy crawl`` exits with status 2).

The expansion runs where the crawl command reads the command line (so its checks see the
real files) and again in :class:`PerTypeFeeds`, an add-on, for crawls started without the
command (``CrawlerProcess`` in a script); it is idempotent. Scrapy's ``FEED_URI_PARAMS``
hook cannot do it: it fills the placeholders of one feed, it cannot split a feed in several.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from scrapy.exporters import CsvItemExporter
from scrapy.settings import BaseSettings
from scrapy.utils.misc import load_object

from topics_crawler.items import ITEM_CLASSES
from topics_crawler.output.exporters import ParquetItemExporter

logger = logging.getLogger(__name__)

#: The placeholder that makes one feed per item type.
PLACEHOLDER = "%(item_type)s"
#: Exporters whose file has one set of columns (a mixed feed loses data or mixes tables).
TABLE_EXPORTERS: tuple[type, ...] = (CsvItemExporter, ParquetItemExporter)


def class_path(item_class: type) -> str:
    """The import path of an item class (``topics_crawler.items.stories.Story``)."""
    return f"{item_class.__module__}.{item_class.__qualname__}"


def feed_exporters(settings: BaseSettings) -> dict[str, type]:
    """Feed format → exporter class (``FEED_EXPORTERS_BASE`` with ``FEED_EXPORTERS``);
    a format whose exporter cannot be imported is left out (Scrapy reports it)."""
    named = {**settings.getdict("FEED_EXPORTERS_BASE"), **settings.getdict("FEED_EXPORTERS")}
    exporters = {}
    for name, exporter in named.items():
        if exporter is None:
            continue
        try:
            cls = load_object(exporter) if isinstance(exporter, str) else exporter
        except (ImportError, NameError, ValueError, AttributeError):
            continue
        if isinstance(cls, type):
            exporters[str(name)] = cls
    return exporters


def _classes(options: Mapping[str, Any]) -> list[type]:
    """The classes of a feed's ``item_classes`` (import paths loaded)."""
    return [
        load_object(cls) if isinstance(cls, str) else cls
        for cls in options.get("item_classes") or ()
    ]


def _one_type(options: dict[str, Any], item_class: type, exporter: type | None) -> dict[str, Any]:
    """``options`` limited to ``item_class`` (and, for Parquet, that class's schema)."""
    limited = {**options, "item_classes": [class_path(item_class)]}
    if exporter is not None and issubclass(exporter, ParquetItemExporter):
        kwargs = dict(options.get("item_export_kwargs") or {})
        kwargs.setdefault("item_class", class_path(item_class))
        limited["item_export_kwargs"] = kwargs
    return limited


def expand_feeds(
    feeds: Mapping[Any, Any], exporters: Mapping[str, type]
) -> dict[str, dict[str, Any]]:
    """``FEEDS`` with each ``%(item_type)s`` URI made one feed per item type (those of its
    ``item_classes``, when it names some), and each Parquet feed of one class given that
    class's schema. Other feeds are kept as they are; applying it twice changes nothing."""
    expanded: dict[str, dict[str, Any]] = {}
    for uri, given in feeds.items():
        options = dict(given) if isinstance(given, Mapping) else {}
        exporter = exporters.get(str(options.get("format", "")))
        chosen = _classes(options)
        if PLACEHOLDER not in str(uri):
            one = len(chosen) == 1 and chosen[0] in ITEM_CLASSES.values()
            expanded[str(uri)] = _one_type(options, chosen[0], exporter) if one else options
            continue
        for item_type, item_class in ITEM_CLASSES.items():
            if chosen and item_class not in chosen:
                continue
            target = str(uri).replace(PLACEHOLDER, item_type)
            expanded[target] = _one_type(options, item_class, exporter)
    return expanded


def per_type_form(uri: str, options: Mapping[str, Any]) -> str:
    """The command-line form of a per-type feed in the folder of ``uri``:
    ``-O 'out/%(item_type)s.csv:csv'`` for ``out/stories.csv`` given with ``-O``."""
    path = PurePosixPath(uri)
    template = str(path.with_name(f"{PLACEHOLDER}{path.suffix}"))
    flag = "-O" if options.get("overwrite") else "-o"
    return f"{flag} '{template}:{options.get('format', '')}'"


def mixed_feed_error(settings: BaseSettings) -> str | None:
    """Why a feed of ``FEEDS`` would lose data: a CSV or Parquet feed that would receive
    several item types (see the module), or None."""
    exporters = feed_exporters(settings)
    for uri, options in expand_feeds(settings.getdict("FEEDS"), exporters).items():
        exporter = exporters.get(str(options.get("format", "")))
        if exporter is None or not issubclass(exporter, TABLE_EXPORTERS):
            continue
        if options.get("fields") or len(_classes(options)) == 1:
            continue  # the columns chosen, or one type
        return (
            f"{uri} would hold every item type (tag pages, stories, authors…) in one "
            f"{options.get('format')} table, whose columns fit one type: write one file per "
            f"type with {per_type_form(uri, options)} (or limit the feed to one type with "
            "item_classes in FEEDS)"
        )
    return None


def expand_per_type_feeds(settings: BaseSettings, priority: str) -> None:
    """Make each ``%(item_type)s`` feed of ``FEEDS`` one feed per item type in ``settings``
    (:func:`expand_feeds`), at the priority ``FEEDS`` has (``priority`` when it has none)."""
    feeds = settings.getdict("FEEDS")
    expanded = expand_feeds(feeds, feed_exporters(settings))
    if expanded != feeds:
        settings.set("FEEDS", expanded, priority=settings.getpriority("FEEDS") or priority)


class PerTypeFeeds:
    """Scrapy add-on (``ADDONS``): expands ``%(item_type)s`` feeds for every crawl (see the
    module); a mixed CSV or Parquet feed that reached it (a crawl started without
    ``scrapy crawl``) is logged as an error."""

    def update_settings(self, settings: BaseSettings) -> None:
        if not settings.getdict("FEEDS"):
            return
        expand_per_type_feeds(settings, "addon")
        problem = mixed_feed_error(settings)
        if problem is not None:
            logger.error("%s", problem)
