"""Combining layers: first non-empty value wins, a ``*_raw`` text stays with its value."""

from __future__ import annotations

import pytest

from topics_crawler.items.layers import is_empty, pick, pick_paired


@pytest.mark.parametrize("value", [None, "", "  ", [], {}, (), set()])
def test_empty_values(value: object) -> None:
    assert is_empty(value)


@pytest.mark.parametrize("value", [0, False, "x", [""], {"a": None}])
def test_values_that_count(value: object) -> None:
    assert not is_empty(value)


def test_pick_takes_the_first_non_empty_value_per_field() -> None:
    state = {"title": None, "claps": 0, "tags": []}
    meta = {"title": "From meta", "tags": ["ai"], "subtitle": ""}
    assert pick(state, meta) == {"title": "From meta", "claps": 0, "tags": ["ai"]}


def test_pick_paired_keeps_raw_text_with_the_value_it_describes() -> None:
    state = {"claps": 1234, "claps_raw": None}
    html = {"claps": 1200, "claps_raw": "1.2K"}
    assert pick_paired(state, html) == {"claps": 1234}
    assert pick_paired(html, state) == {"claps": 1200, "claps_raw": "1.2K"}
    assert pick_paired({}, html)["claps_raw"] == "1.2K"


def test_pick_paired_keeps_the_source_of_a_refused_value_no_layer_replaced() -> None:
    state = {"claps": None, "claps_raw": "1e+30"}  # a count past int64: refused
    assert pick_paired(state, {"claps": 1200, "claps_raw": "1.2K"}) == {
        "claps": 1200,
        "claps_raw": "1.2K",
    }
    assert pick_paired(state, {"title": "t"}) == {"claps_raw": "1e+30", "title": "t"}
