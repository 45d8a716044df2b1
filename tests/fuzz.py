"""Parser fuzzing harness: seeded mutations of real captures and our own pages.

Sources are fixture cases with their URL and kind (``tests/fixtures/own`` alone, or
with ``tests/fixtures/real`` read from the shared captures folder), parsed both with
the kind given (as the spider does) and detected. Mutations: truncation, deleted
and duplicated tags, corrupted JSON, values of the wrong type swapped in the JSON
text and, decoded, in place inside the embedded state (references to missing or
wrong-typed entities included), huge strings, deep nesting, wrong encodings and
flipped bytes. Each call must return a :class:`PageResult` carrying an item or a
recorded error, with items that serialise, within :data:`HANG_SECONDS`.

Used by ``tests/test_fuzz_pages.py`` (bounded runs) and ``bench/fuzz_pages.py``
(the full ``make fuzz`` run).
"""

from __future__ import annotations

import json
import random
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from tests.fixture_cases import Case, discover, real_pages_dir
from topics_crawler.items import item_to_dict
from topics_crawler.pages import PageResult, parse_page

SEED = 20261130
#: A page taking more CPU seconds than this to parse counts as a hang.
HANG_SECONDS = 10.0
Corpus = Literal["all", "own"]
SCRAPED_AT = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
CRASH_PREFIX = "parser crashed"
_DECODER = json.JSONDecoder()
_JSON_KEY = re.compile(rb'"[A-Za-z_$][\w$.]{0,40}"\s*:\s*')
_WRONG_VALUES = (b"null", b"0", b"-1", b"1e309", b"true", b'""', b"[]", b"{}", b'"x"', b'[{"a":1}]')

Mutation = Callable[[random.Random, bytes], bytes]


def _span(rng: random.Random, data: bytes) -> tuple[int, int]:
    start = rng.randrange(len(data) + 1)
    return start, min(len(data), start + rng.randint(1, 2048))


def truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randrange(len(data) + 1)]


def _random_tag(rng: random.Random, data: bytes) -> tuple[int, int] | None:
    starts = [m.start() for m in re.finditer(rb"<[a-zA-Z/!]", data)]
    if not starts:
        return None
    start = rng.choice(starts)
    end = data.find(b">", start)
    return (start, end + 1) if end > 0 else None


def delete_tags(rng: random.Random, data: bytes) -> bytes:
    for _ in range(rng.randint(1, 20)):
        found = _random_tag(rng, data)
        if found is None:
            break
        data = data[: found[0]] + data[found[1] :]
    return data


def duplicate_tags(rng: random.Random, data: bytes) -> bytes:
    for _ in range(rng.randint(1, 10)):
        found = _random_tag(rng, data)
        if found is None:
            break
        start, end = found
        end = data.find(b"<", end) if data.find(b"<", end) > 0 else end
        data = data[:start] + data[start:end] * rng.randint(2, 50) + data[start:]
    return data


def corrupt_json(rng: random.Random, data: bytes) -> bytes:
    positions = [m.start() for m in re.finditer(rb'[{}\[\]":,]', data)]
    if not positions:
        return truncate(rng, data)
    chunk = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        position = rng.choice(positions)
        if position < len(chunk):
            chunk[position : position + 1] = rng.choice([b"", b'"', b"{", b"]", b"\\", b",,"])
    return bytes(chunk)


def wrong_types(rng: random.Random, data: bytes) -> bytes:
    """Swap the values of random JSON members for values of another type."""
    keys = list(_JSON_KEY.finditer(data))
    if not keys:
        return corrupt_json(rng, data)
    text = data.decode("utf-8", errors="replace")
    for match in sorted(
        rng.sample(keys, min(len(keys), rng.randint(1, 40))), key=lambda m: -m.end()
    ):
        start = len(data[: match.end()].decode("utf-8", errors="replace"))
        try:
            _value, end = _DECODER.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError):
            continue
        text = text[:start] + rng.choice(_WRONG_VALUES).decode() + text[end:]
    return text.encode("utf-8")


def huge_string(rng: random.Random, data: bytes) -> bytes:
    filler = rng.choice([b"A", b"\xc3\xa9", b"\xf0\x9f\x98\x80", b"&amp;", b"\\u00e9", b" "])
    start, _end = _span(rng, data)
    return data[:start] + filler * rng.randint(50_000, 400_000) + data[start:]


def deep_nesting(rng: random.Random, data: bytes) -> bytes:
    depth = rng.choice([1_000, 10_000, 100_000])
    bomb = rng.choice([b"[" * depth, b'{"a":' * depth, b"<div>" * depth])
    marker = data.find(b"__APOLLO_STATE__ = ")
    start = marker + len(b"__APOLLO_STATE__ = ") if marker >= 0 else _span(rng, data)[0]
    return data[:start] + bomb + data[start:]


def wrong_encoding(rng: random.Random, data: bytes) -> bytes:
    text = data.decode("utf-8", errors="replace")
    encoding = rng.choice(["utf-16", "utf-16-be", "utf-32", "cp1252", "latin-1", "shift_jis"])
    encoded = text.encode(encoding, errors="replace")
    return rng.choice([b"", b"\xef\xbb\xbf", b"\xff\xfe"]) + encoded


def flip_bytes(rng: random.Random, data: bytes) -> bytes:
    chunk = bytearray(data)
    for _ in range(rng.randint(1, 64)):
        if chunk:
            chunk[rng.randrange(len(chunk))] = rng.randrange(256)
    return bytes(chunk)


#: Where embedded JSON starts (the value follows the marker and ``=``/``(``/spaces).
_STATE_MARKERS = (b"__APOLLO_STATE__", b'window["obvInit"](', b"GLOBALS =")
#: Most values of one page's state that :func:`swap_state_types` looks at.
_MAX_STATE_VALUES = 50_000


def _wrong_value(rng: random.Random, value: Any, keys: list[str]) -> Any:
    """A value of another JSON type than ``value``; references may point at a missing
    entity or at an entity of another type than the field expects."""
    choices: list[Any] = [None, 0, -1, 2.5, True, "", "x" * rng.randint(1, 30), [], {}]
    choices += [[{"a": 1}], {"__ref": "Missing:0"}, [[[[[]]]]]]
    if keys:
        choices += [{"__ref": rng.choice(keys)}, {"type": "id", "id": rng.choice(keys)}]
    if value is not None and not isinstance(value, list | dict):
        choices += [[value], {"value": value}]
    wrong = [c for c in choices if type(c) is not type(value)]
    return rng.choice(wrong)


def _state_span(data: bytes) -> tuple[int, int, Any] | None:
    """``(start, end, value)`` of the page's embedded JSON, or of the whole JSON body."""
    text = data.decode("utf-8", errors="replace")
    starts = []
    for marker in _STATE_MARKERS:
        index = text.find(marker.decode())
        if index >= 0:
            pos = index + len(marker)
            while pos < len(text) and text[pos] in " \t\r\n=(":
                pos += 1
            starts.append(pos)
    stripped = text.lstrip()
    if stripped.startswith("])}while(1);</x>"):
        starts.append(text.index("</x>") + 4)
    elif stripped[:1] in ("{", "["):
        starts.append(len(text) - len(stripped))
    for start in starts:
        try:
            value, end = _DECODER.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(value, dict | list):
            return start, end, value
    return None


def swap_state_types(rng: random.Random, data: bytes) -> bytes:
    """Decode the embedded state (or JSON body), swap 1–40 values for values of another
    type in place — at any depth, entity fields, references and list members alike — and
    write it back where it was."""
    found = _state_span(data)
    if found is None:
        return wrong_types(rng, data)
    start, end, state = found
    slots: list[tuple[Any, Any]] = []
    stack = [state]
    while stack and len(slots) < _MAX_STATE_VALUES:
        container = stack.pop()
        members = container.items() if isinstance(container, dict) else enumerate(container)
        for key, value in members:
            slots.append((container, key))
            if isinstance(value, dict | list):
                stack.append(value)
    if not slots:
        return wrong_types(rng, data)
    keys = [k for k in state if isinstance(k, str) and ":" in k] if isinstance(state, dict) else []
    for container, key in rng.sample(slots, min(len(slots), rng.randint(1, 40))):
        container[key] = _wrong_value(rng, container[key], keys)
    text = data.decode("utf-8", errors="replace")
    encoded = json.dumps(state, ensure_ascii=False).replace("</", "<\\/")
    return (text[:start] + encoded + text[end:]).encode("utf-8")


MUTATIONS: dict[str, Mutation] = {
    "truncate": truncate,
    "delete_tags": delete_tags,
    "duplicate_tags": duplicate_tags,
    "corrupt_json": corrupt_json,
    "wrong_types": wrong_types,
    "swap_state_types": swap_state_types,
    "huge_string": huge_string,
    "deep_nesting": deep_nesting,
    "wrong_encoding": wrong_encoding,
    "flip_bytes": flip_bytes,
}


@dataclass
class FuzzPage:
    """One mutated page and where it came from."""

    source: str
    mutations: list[str]
    url: str
    kind: str | None
    body: bytes


@dataclass
class FuzzReport:
    """What a fuzz run found."""

    pages: int = 0
    uncaught: list[tuple[FuzzPage, str]] = field(default_factory=list)
    crashes: list[tuple[FuzzPage, str]] = field(default_factory=list)
    silent: list[FuzzPage] = field(default_factory=list)
    unserialisable: list[tuple[FuzzPage, str]] = field(default_factory=list)
    hangs: list[tuple[FuzzPage, str]] = field(default_factory=list)
    outcomes: Counter[str] = field(default_factory=Counter)
    slowest: float = 0.0
    """Longest parse of one page, seconds."""

    def describe(self, found: list[tuple[FuzzPage, str]], limit: int = 15) -> str:
        lines = [f"{p.source} [{'+'.join(p.mutations)}] kind={p.kind}: {e}" for p, e in found]
        return "\n".join(lines[:limit]) + (
            f"\n… {len(lines) - limit} more" if len(lines) > limit else ""
        )


def source_cases(corpus: Corpus = "all") -> list[Case]:
    """Fixture cases whose input is readable: our own pages, plus (``corpus="all"``) the
    real captures when the shared folder holds them."""
    cases = [c for c in discover("own") if c.input_path().exists()]
    if corpus == "all" and real_pages_dir().is_dir():
        cases += [c for c in discover("real") if c.input_path().exists()]
    return cases


def fuzz_pages(count: int, seed: int, corpus: Corpus = "all") -> Iterator[FuzzPage]:
    """``count`` mutated pages, the same ones for the same seed and corpus."""
    cases = source_cases(corpus)
    inputs = [(case, case.input_path().read_bytes()) for case in cases]
    rng = random.Random(seed)
    names = sorted(MUTATIONS)
    for _ in range(count):
        case, body = rng.choice(inputs)
        chosen = rng.sample(names, rng.choice([1, 1, 1, 2, 3]))
        for name in chosen:
            body = MUTATIONS[name](rng, body)
        kind = case.meta.get("kind") if rng.random() < 0.7 else None
        yield FuzzPage(case.name, chosen, case.meta["url"], kind, body)


def check(report: FuzzReport, page: FuzzPage) -> None:
    report.pages += 1
    started = time.process_time()  # CPU time: on a shared machine wall time is the load's
    try:
        result = parse_page(page.body, page.url, kind=page.kind, scraped_at=SCRAPED_AT)
    except Exception as exc:
        report.uncaught.append((page, repr(exc)))
        return
    elapsed = time.process_time() - started
    report.slowest = max(report.slowest, elapsed)
    if elapsed > HANG_SECONDS:
        report.hangs.append((page, f"took {elapsed:.1f} s"))
    if not isinstance(result, PageResult):
        report.uncaught.append((page, f"returned {type(result).__name__}"))
        return
    crash = next((e for e in result.errors if e.startswith(CRASH_PREFIX)), None)
    if crash is not None:
        report.crashes.append((page, crash))
    if not result.items and not result.errors:
        report.silent.append(page)
    report.outcomes["items" if result.items else "errors only" if result.errors else "empty"] += 1
    for item in result.items:
        try:
            json.dumps(item_to_dict(item))
        except (TypeError, ValueError) as exc:
            report.unserialisable.append((page, f"{type(item).__name__}: {exc}"))


def run_fuzz(count: int, seed: int, corpus: Corpus = "all") -> FuzzReport:
    """Parse ``count`` pages of ``seed`` over ``corpus``; what went wrong, if anything."""
    report = FuzzReport()
    for page in fuzz_pages(count, seed, corpus):
        check(report, page)
    return report


def problems(report: FuzzReport) -> list[tuple[FuzzPage, str]]:
    """Every failure of a run: raised, crashed, hung, silent or unserialisable pages."""
    silent = [(page, "no item, no error") for page in report.silent]
    return [*report.uncaught, *report.crashes, *report.hangs, *silent, *report.unserialisable]
