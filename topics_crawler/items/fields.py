"""Field declarations: each item field's kind, requirement, identity rank, ``*_raw`` companion
and description, declared once on the item class with :func:`spec`; and each field
:class:`Kind` declared once with its format, its normaliser (:mod:`.normalisers`), its check
(:mod:`.checks`) and its Parquet column, which the pipelines and the exporter read.

Validation, normalisation, the merge, the Parquet schema and the dataset card all read
these declarations (:func:`specs_of`, :func:`kinds`, :func:`required_groups`,
:func:`identity_fields`, :func:`raw_companion`, each given the item class); nothing else
lists fields by name. This module knows no item class: the classes import it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Any, Literal

import pyarrow as pa

from topics_crawler.items.checks import (
    DOMAIN_RE,
    HEX_ID_RE,
    LANGUAGE_RE,
    SLUG_RE,
    SOURCE_RE,
    USERNAME_RE,
    Check,
    check_access,
    check_any,
    check_bool,
    check_canonical,
    check_count,
    check_http_url,
    check_listing,
    check_minutes,
    check_record_list,
    check_sections,
    check_share,
    check_tag,
    check_tag_list,
    check_text,
    check_text_list,
    check_timestamp,
    matches,
)
from topics_crawler.items.normalisers import (
    Normaliser,
    as_body,
    as_bool,
    as_count,
    as_domain,
    as_is,
    as_language,
    as_lower,
    as_minutes,
    as_raw,
    as_record_list,
    as_sections,
    as_share,
    as_tag,
    as_tag_list,
    as_text,
    as_text_list,
    as_timestamp,
    as_url,
    as_username,
)
from topics_crawler.urls import POST_ID_RE

#: The description of every item type's ``data_source`` field
#: (:func:`topics_crawler.items.layers.pick_named`).
DATA_SOURCE_DOC = (
    "The layers that filled the row, joined by ``+``: ``state`` (the page's embedded state),"
    " ``jsonld``, ``meta``, ``dom``, ``url``, ``card`` (a listing card), ``graphql``, ``json``"
    " (a ``?format=json`` payload), ``feed`` (RSS), ``archive`` (a day archive page)"
    " (``state+jsonld``, ``state+card``)."
)
#: How the merge combines two timestamps of a field declared with ``keep=``.
Keep = Literal["earliest", "latest"]

#: Key of the :class:`FieldSpec` in a dataclass field's ``metadata``.
SPEC_KEY = "topics_crawler"


#: Field metadata key naming how a Parquet column encodes its values (``json`` text,
#: a ``mapping`` as a list of structs).
ENCODING_KEY = b"topics_crawler.encoding"
MAPPING_ENCODING = b"mapping"
#: Whole seconds in UTC. Parquet has no seconds unit (MILLIS is its coarsest), so the
#: column is ``timestamp[ms, tz=UTC]``: what pyarrow, DuckDB and polars read back; items
#: and JSON keep ``2025-01-02T03:04:05Z``.
TIMESTAMP_TYPE = pa.timestamp("ms", tz="UTC")
#: A mapping column (the sections) is a plain list of structs, which every reader
#: (``datasets`` included) takes, where an Arrow ``map`` is not; read back as a mapping.
SECTIONS_TYPE = pa.list_(
    pa.struct([("section", pa.string()), ("story_ids", pa.list_(pa.string()))])
)

#: ``column(name, declared)``: the Parquet column of a field of the kind.
ArrowColumn = Callable[[str, "FieldSpec"], pa.Field]


def arrow_column(
    arrow_type: pa.DataType, metadata: dict[bytes, bytes] | None = None
) -> ArrowColumn:
    """Columns of one Arrow type (and field metadata), whatever the field."""
    return lambda name, _declared: pa.field(name, arrow_type, metadata=metadata)


def record_list_column(name: str, declared: FieldSpec) -> pa.Field:
    """``list<struct<...>>`` with the field's declared members, each a string."""
    if not declared.members:
        raise TypeError(f"a record list needs its members declared: {declared.doc[:60]}")
    return pa.field(name, pa.list_(pa.struct([(m, pa.string()) for m in declared.members])))


STRING = arrow_column(pa.string())
STRING_LIST = arrow_column(pa.list_(pa.string()))


@dataclass(frozen=True)
class KindSpec:
    """What a value kind means, declared once: its format, its normaliser (items from
    elsewhere, :mod:`topics_crawler.pipelines.normalize`), its check
    (:mod:`topics_crawler.pipelines.validate`) and its Parquet column
    (:mod:`topics_crawler.output.exporters`)."""

    doc: str
    normalise: Normaliser
    check: Check
    column: ArrowColumn


class Kind(Enum):
    """Value kinds of item fields (see :class:`KindSpec`)."""

    POST_ID = KindSpec(
        "Medium post id, lowercase hex, 10 to 12 characters.",
        as_lower, matches(POST_ID_RE, "not_post_id"), STRING,
    )  # fmt: skip
    HEX_ID = KindSpec(
        "Medium user / collection id, lowercase hex.",
        as_lower, matches(HEX_ID_RE, "not_hex_id"), STRING,
    )  # fmt: skip
    URL = KindSpec(
        "Canonical entity URL (:func:`topics_crawler.urls.canonical_url`).",
        as_url, check_canonical, STRING,
    )  # fmt: skip
    LINK = KindSpec(
        "Absolute http(s) URL kept as given (images): trimmed only.",
        as_text, check_http_url, STRING,
    )  # fmt: skip
    USERNAME = KindSpec(
        "Username without ``@``.", as_username, matches(USERNAME_RE, "bad_username"), STRING
    )
    SLUG = KindSpec("Lowercase publication slug.", as_lower, matches(SLUG_RE, "not_slug"), STRING)
    TAG = KindSpec(
        "Tag slug (:func:`topics_crawler.items.values.tag_slug`), also from a display name.",
        as_tag, check_tag, STRING,
    )  # fmt: skip
    DOMAIN = KindSpec("Lowercase host name.", as_domain, matches(DOMAIN_RE, "bad_domain"), STRING)
    LANGUAGE = KindSpec(
        "Lowercase language code.", as_language, matches(LANGUAGE_RE, "bad_language"), STRING
    )
    TEXT = KindSpec("One-line text: trimmed, NFC, white space folded.", as_text, check_text, STRING)
    BODY = KindSpec(
        "Multi-line body text: NFC and trimmed; inner white space (code indentation) kept.",
        as_body, check_text, STRING,
    )  # fmt: skip
    TIMESTAMP = KindSpec(
        "``YYYY-MM-DDTHH:MM:SSZ``.", as_timestamp, check_timestamp, arrow_column(TIMESTAMP_TYPE)
    )
    COUNT = KindSpec("Non-negative int.", as_count, check_count, arrow_column(pa.int64()))
    MINUTES = KindSpec(
        "Non-negative float (reading time).", as_minutes, check_minutes, arrow_column(pa.float64())
    )
    SOURCE = KindSpec(
        "Layer names joined by ``+`` (``state+jsonld``; :data:`.layers.SOURCES`).",
        as_lower, matches(SOURCE_RE, "bad_source"), STRING,
    )  # fmt: skip
    SHARE = KindSpec(
        "A fraction from 0 to 1 (a preview's share of a story).",
        as_share, check_share, arrow_column(pa.float64()),
    )  # fmt: skip
    ACCESS = KindSpec(
        "How much of a story a row holds: ``full``, ``preview``, ``full_with_session``"
        " (:mod:`topics_crawler.items.access`).",
        as_lower, check_access, STRING,
    )  # fmt: skip
    LISTING = KindSpec(
        "How a listing showed a story under a tag: ``section``, ``related``, ``history``,"
        " ``archive``, ``feed`` (:mod:`topics_crawler.items.listing`).",
        as_lower, check_listing, STRING,
    )  # fmt: skip
    BOOL = KindSpec("True / False / None.", as_bool, check_bool, arrow_column(pa.bool_()))
    RAW = KindSpec(
        "Source text companion of another field; kept as given (trimmed).",
        as_raw, check_text, STRING,
    )  # fmt: skip
    TAG_LIST = KindSpec(
        "List of tag slugs, no duplicates.", as_tag_list, check_tag_list, STRING_LIST
    )
    TEXT_LIST = KindSpec("List of one-line texts.", as_text_list, check_text_list, STRING_LIST)
    RECORD_LIST = KindSpec(
        "List of flat ``{str: str | None}`` records (their keys declared as the field's "
        "``members``).",
        as_record_list, check_record_list, record_list_column,
    )  # fmt: skip
    SECTIONS = KindSpec(
        "Mapping section key → list of post ids.",
        as_sections, check_sections, arrow_column(SECTIONS_TYPE, {ENCODING_KEY: MAPPING_ENCODING}),
    )  # fmt: skip
    ITEM_TYPE = KindSpec("The entity kind.", as_is, check_any, STRING)

    @property
    def normalise(self) -> Normaliser:
        """``(value, now) -> (value, source text for *_raw)``; raises ``Unreadable``."""
        return self.value.normalise

    @property
    def check(self) -> Check:
        """``value -> problem name`` (None: the value is in the kind's format)."""
        return self.value.check

    def column(self, name: str, declared: FieldSpec) -> pa.Field:
        """The Parquet column of the field ``name`` of this kind."""
        return self.value.column(name, declared)


@dataclass(frozen=True)
class FieldSpec:
    """What one field holds and how the pipelines treat it."""

    kind: Kind
    doc: str
    required: bool = False
    """The item is not exported without it."""
    one_of: str | None = None
    """Name of a group of fields of which at least one must be set (``"id"``)."""
    identity: int | None = None
    """Rank among the fields that identify the entity (0 = most specific); None: not one."""
    raw: str | None = None
    """Name of the ``*_raw`` companion keeping the source text of this field."""
    members: tuple[str, ...] = ()
    """Keys of each record of a :attr:`Kind.RECORD_LIST` field (its Parquet struct)."""
    keep: Keep | None = None
    """How the merge combines two values of a timestamp field whatever the records'
    richness: ``earliest`` (a first sighting) or ``latest`` (``scraped_at``, a last
    sighting); None: the merge rule's usual steps (:mod:`topics_crawler.items.merge`)."""


def spec(
    kind: Kind,
    doc: str,
    *,
    required: bool = False,
    one_of: str | None = None,
    identity: int | None = None,
    raw: str | None = None,
    members: tuple[str, ...] = (),
    keep: Keep | None = None,
    default: Any = None,
    factory: Callable[[], Any] | None = None,
    init: bool = True,
) -> Any:
    """A dataclass ``field()`` carrying its :class:`FieldSpec` (default None, or ``factory()``)."""
    metadata = {SPEC_KEY: FieldSpec(kind, doc, required, one_of, identity, raw, members, keep)}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=metadata, init=init)
    return dataclasses.field(default=default, metadata=metadata, init=init)


def specs_of(item_class: type) -> dict[str, FieldSpec]:
    """Field name → :class:`FieldSpec` of a declared item class, in declaration order."""
    return _specs(item_class)


@cache
def _specs(item_class: type) -> dict[str, FieldSpec]:
    out = {}
    for f in dataclasses.fields(item_class):
        declared = f.metadata.get(SPEC_KEY)
        if not isinstance(declared, FieldSpec):
            raise TypeError(f"{item_class.__name__}.{f.name} is not declared with spec()")
        out[f.name] = declared
    return out


def kinds(item_class: type) -> dict[str, Kind]:
    """Field name → :class:`Kind` of a declared item class, in declaration order."""
    return {name: s.kind for name, s in specs_of(item_class).items()}


def required_groups(item_class: type) -> list[tuple[str, ...]]:
    """Required fields; a tuple of several names means "at least one of these"."""
    groups: dict[str, list[str]] = {}
    out: list[tuple[str, ...] | str] = []
    for name, s in specs_of(item_class).items():
        if s.one_of:
            if s.one_of not in groups:
                groups[s.one_of] = []
                out.append(s.one_of)
            groups[s.one_of].append(name)
        elif s.required:
            out.append((name,))
    return [tuple(groups[entry]) if isinstance(entry, str) else entry for entry in out]


def identity_fields(item_class: type) -> tuple[str, ...]:
    """The fields that identify an entity of ``item_class``, most specific first."""
    ranked = [
        (s.identity, name) for name, s in specs_of(item_class).items() if s.identity is not None
    ]
    return tuple(name for _, name in sorted(ranked))


def raw_companion(item_class: type, name: str) -> str | None:
    """Name of the ``*_raw`` field that keeps the source text of ``name``, if it has one."""
    declared = specs_of(item_class).get(name)
    return declared.raw if declared else None


def kept(item_class: type) -> dict[str, Keep]:
    """Fields declared with ``keep=`` → how the merge combines their two values."""
    return {name: s.keep for name, s in specs_of(item_class).items() if s.keep is not None}
