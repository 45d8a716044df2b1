"""Field declarations: each item field's kind, requirement, identity rank, ``*_raw`` companion
and description, declared once on the item class with :func:`spec`.

Validation, normalisation, the merge, the Parquet schema and the dataset card all read
these declarations (:func:`specs_of`, :func:`kinds`, :func:`required_groups`,
:func:`identity_fields`, :func:`raw_companion`, each given the item class); nothing else
lists fields by name. This module knows no item class: the classes import it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Any

#: Key of the :class:`FieldSpec` in a dataclass field's ``metadata``.
SPEC_KEY = "topics_crawler"


class Kind(Enum):
    """Value kinds of item fields."""

    POST_ID = "post_id"
    """Medium post id, lowercase hex, 10 to 12 characters."""
    HEX_ID = "hex_id"
    """Medium user / collection id, lowercase hex."""
    URL = "url"
    """Canonical entity URL (:func:`topics_crawler.urls.canonical_url`)."""
    LINK = "link"
    """Absolute http(s) URL kept as given (images): trimmed only."""
    USERNAME = "username"
    """Username without ``@``."""
    SLUG = "slug"
    """Lowercase publication slug."""
    TAG = "tag"
    """Tag slug (:func:`topics_crawler.items.values.tag_slug`), also from a display name."""
    DOMAIN = "domain"
    """Lowercase host name."""
    LANGUAGE = "language"
    """Lowercase language code."""
    TEXT = "text"
    """One-line text: trimmed, NFC, white space folded."""
    BODY = "body"
    """Multi-line body text: NFC and trimmed; inner white space (code indentation) kept."""
    TIMESTAMP = "timestamp"
    """``YYYY-MM-DDTHH:MM:SSZ``."""
    COUNT = "count"
    """Non-negative int."""
    MINUTES = "minutes"
    """Non-negative float (reading time)."""
    BOOL = "bool"
    """True / False / None."""
    RAW = "raw"
    """Source text companion of another field; kept as given (trimmed)."""
    TAG_LIST = "tag_list"
    """List of tag slugs, no duplicates."""
    TEXT_LIST = "text_list"
    """List of one-line texts."""
    RECORD_LIST = "record_list"
    """List of flat ``{str: str | None}`` records."""
    SECTIONS = "sections"
    """Mapping section key → list of post ids."""
    ITEM_TYPE = "item_type"
    """The entity kind."""


POST_ID_RE = re.compile(r"^[0-9a-f]{10,12}$")
HEX_ID_RE = re.compile(r"^[0-9a-f]{8,16}$")
USERNAME_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")
SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9\-_]{0,99}$")
DOMAIN_RE = re.compile(r"^[a-z0-9]([a-z0-9\-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9\-]*[a-z0-9])?)+$")
LANGUAGE_RE = re.compile(r"^[a-z]{2,3}(-[a-z0-9]{2,8})?$")
TIMESTAMP_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


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


def spec(
    kind: Kind,
    doc: str,
    *,
    required: bool = False,
    one_of: str | None = None,
    identity: int | None = None,
    raw: str | None = None,
    members: tuple[str, ...] = (),
    default: Any = None,
    factory: Callable[[], Any] | None = None,
    init: bool = True,
) -> Any:
    """A dataclass ``field()`` carrying its :class:`FieldSpec` (default None, or ``factory()``)."""
    metadata = {SPEC_KEY: FieldSpec(kind, doc, required, one_of, identity, raw, members)}
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
