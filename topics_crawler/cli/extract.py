"""Print the items of one saved page as JSON lines (kind detected from URL and content).

A page whose items say no more than its URL does (random bytes, another site's
page) is reported on stderr with exit status 1: nothing Medium-specific was read; so is a
page of a host that left Medium, by its host. A saved refusal — Cloudflare's managed
challenge or WAF page, a sign-in wall — is named on stderr with exit status 3, never read
as a page.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from topics_crawler.cli._errors import CliError, NoDataError, RefusedPageError
from topics_crawler.items import item_to_dict
from topics_crawler.pages import PARSERS, PageResult, parse_page
from topics_crawler.pages._blocked import detect_block
from topics_crawler.pages._off_medium import left_medium_reason
from topics_crawler.urls import canonical_url


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("page_file", type=Path, help="saved page (HTML, JSON or RSS)")
    parser.add_argument("--url", required=True, help="the URL the page was fetched from")
    parser.add_argument(
        "--kind", choices=sorted(PARSERS), help="page kind (default: detect from URL and content)"
    )
    parser.add_argument("--links", action="store_true", help="also print the links found")


def run(args: argparse.Namespace) -> int:
    if canonical_url(args.url) is None:
        raise CliError(f"--url {args.url!r} is not an http(s) URL")
    try:
        body = args.page_file.read_bytes()
    except OSError as exc:
        raise CliError(f"cannot read {args.page_file}: {exc.strerror or exc}") from exc
    block = detect_block(None, args.url, body)
    if block is not None:
        raise RefusedPageError(
            f"{args.page_file}: not a Medium page but {block.describe()}; {block.hint}"
        )
    result = parse_page(body, args.url, kind=args.kind)
    if result.off_medium is not None:
        raise NoDataError(f"{args.page_file}: {left_medium_reason(result.off_medium)}")
    if result.kind == "unknown":
        raise CliError(f"{args.page_file}: unknown page kind (give --kind)")
    if not result.items or only_the_url(result):
        reasons = "; ".join(result.errors) or "nothing beyond what the URL says"
        raise NoDataError(f"{args.page_file}: no Medium data found ({reasons})")
    for item in result.items:
        print(json.dumps(item_to_dict(item), ensure_ascii=False))
    if args.links:
        for link in result.links:
            print(json.dumps({"link": link.kind, "key": link.key, "url": link.url}))
    for reason in result.errors:
        print(f"warning: {args.page_file}: {reason}", file=sys.stderr)
    return 0


def only_the_url(result: PageResult) -> bool:
    """True when the page's items are what an empty page at the same URL gives: every
    fact came from the address, none from the page."""
    empty = parse_page(b"", result.url, kind=result.kind)
    return _facts(result) == _facts(empty)


def _facts(result: PageResult) -> list[dict[str, object]]:
    rows = [item_to_dict(item) for item in result.items]
    return [{k: v for k, v in row.items() if k != "scraped_at"} for row in rows]
