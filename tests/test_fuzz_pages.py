"""Parser fuzzing: seeded mutations of real captures and our own pages never crash ``parse_page``.

Sources are every fixture case (``tests/fixtures/real`` read from the shared
captures folder, ``tests/fixtures/own``) with its URL and kind, parsed both
with the kind given (as the spider does) and detected. Mutations: truncation,
deleted and duplicated tags, corrupted JSON, values of the wrong type inside
the embedded state, huge strings, deep nesting, wrong encodings and flipped
bytes. Each call must return a :class:`PageResult` carrying an item or a
recorded error, with items that serialise. A fast subset runs in every test
run; the 10,000-page run is marked ``slow``.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from tests.fixture_cases import Case, discover, real_pages_dir
from topics_crawler.items import item_to_dict
from topics_crawler.pages import PageResult, parse_page

SEED = 20261130
FAST_PAGES = 400
SLOW_PAGES = 10_000
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


MUTATIONS: dict[str, Mutation] = {
    "truncate": truncate,
    "delete_tags": delete_tags,
    "duplicate_tags": duplicate_tags,
    "corrupt_json": corrupt_json,
    "wrong_types": wrong_types,
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
    outcomes: Counter[str] = field(default_factory=Counter)

    def describe(self, found: list[tuple[FuzzPage, str]], limit: int = 15) -> str:
        lines = [f"{p.source} [{'+'.join(p.mutations)}] kind={p.kind}: {e}" for p, e in found]
        return "\n".join(lines[:limit]) + (
            f"\n… {len(lines) - limit} more" if len(lines) > limit else ""
        )


def source_cases() -> list[Case]:
    """Fixture cases whose input is readable (real ones need the shared captures)."""
    have_real = real_pages_dir().is_dir()
    cases = [c for c in discover("own") if c.input_path().exists()]
    if have_real:
        cases += [c for c in discover("real") if c.input_path().exists()]
    return cases


def fuzz_pages(count: int, seed: int) -> Iterator[FuzzPage]:
    cases = source_cases()
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
    try:
        result = parse_page(page.body, page.url, kind=page.kind, scraped_at=SCRAPED_AT)
    except Exception as exc:
        report.uncaught.append((page, repr(exc)))
        return
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


def run_fuzz(count: int, seed: int) -> FuzzReport:
    report = FuzzReport()
    for page in fuzz_pages(count, seed):
        check(report, page)
    return report


@pytest.fixture(scope="module")
def fast_report() -> FuzzReport:
    return run_fuzz(FAST_PAGES, SEED)


@pytest.fixture(scope="module")
def full_report() -> FuzzReport:
    return run_fuzz(SLOW_PAGES, SEED + 1)


def test_mutations_change_pages_and_are_reproducible() -> None:
    data = (
        b'<html><head><script>window.__APOLLO_STATE__ = {"Post:1":{"title":"T","n":3}}'
        b"</script></head><body><p>x</p></body></html>"
    )
    for name, mutation in MUTATIONS.items():
        first = mutation(random.Random(7), data)
        assert first == mutation(random.Random(7), data), name
        assert first != data, name
    typed = wrong_types(random.Random(1), data)
    assert b'"title":"T"' not in typed or b'"n":3' not in typed


def test_fast_fuzz_never_raises(fast_report: FuzzReport) -> None:
    assert fast_report.pages == FAST_PAGES
    assert not fast_report.uncaught, fast_report.describe(fast_report.uncaught)
    assert not fast_report.unserialisable, fast_report.describe(fast_report.unserialisable)


def test_fast_fuzz_every_page_yields_an_item_or_an_error(fast_report: FuzzReport) -> None:
    silent = [(page, "no item, no error") for page in fast_report.silent]
    assert not silent, fast_report.describe(silent)


def test_fast_fuzz_finds_no_parser_crash(fast_report: FuzzReport) -> None:
    assert not fast_report.crashes, fast_report.describe(fast_report.crashes)


@pytest.mark.slow
def test_fuzz_10000_pages_never_raise(full_report: FuzzReport) -> None:
    assert full_report.pages == SLOW_PAGES
    assert not full_report.uncaught, full_report.describe(full_report.uncaught)
    assert not full_report.unserialisable, full_report.describe(full_report.unserialisable)
    silent = [(page, "no item, no error") for page in full_report.silent]
    assert not silent, full_report.describe(silent)


@pytest.mark.slow
def test_fuzz_10000_pages_find_no_parser_crash(full_report: FuzzReport) -> None:
    assert not full_report.crashes, full_report.describe(full_report.crashes)
