"""Serve the local Medium-like site until Ctrl-C; the first output line is its base URL.

python -m topics_crawler.site [--port N] [--archive N] [--latency MS] [--access-log FILE]
                     [--faults "rate=0.2,seed=7,kinds=500+429+hang"]  (see site/faults.py)
                     [--js-sections]  (see topics_crawler/site/js_sections.py)
                     [--scale-tags N]  (see topics_crawler/site/scale.py)
                     [--tag-generations]  (see topics_crawler/site/generations.py)
                     [--topic-graph]  (related tags with pages, see site/topic_graph.py)
                     [--rate-limit N [--rate-burst B]]  (see topics_crawler/site/rate_limit.py)
                     [--waf] [--challenge]  (Cloudflare's refusals, see site/refusals.py)
                     [--graphql-refused]  (every POST /_/graphql answered 403, see graphql.py)
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from topics_crawler.site.content import default_site
from topics_crawler.site.faults import FaultPlan
from topics_crawler.site.generations import generations_site
from topics_crawler.site.rate_limit import TokenBucket
from topics_crawler.site.refusals import Refusals
from topics_crawler.site.scale import with_scale_tags
from topics_crawler.site.server import SiteServer
from topics_crawler.site.topic_graph import topic_graph_site

ARCHIVE_TAG = "distributed-training"


def build_parser(prog: str = "python -m topics_crawler.site") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="port to bind (default: a free one)")
    parser.add_argument(
        "--archive", type=int, default=0, metavar="N",
        help=f"add N synthetic stories to the {ARCHIVE_TAG} tag (scale tests)",
    )  # fmt: skip
    parser.add_argument("--latency", type=float, default=0.0, metavar="MS",
                        help="delay every response by MS milliseconds")  # fmt: skip
    parser.add_argument("--access-log", type=Path, default=None, metavar="FILE",
                        help="append 'METHOD PATH STATUS' lines to FILE")  # fmt: skip
    parser.add_argument("--faults", type=fault_plan, default=None, metavar="SPEC",
                        help="inject faults: 'rate=0.2,seed=7' (site/faults.py)")  # fmt: skip
    parser.add_argument("--js-sections", action="store_true",
                        help="sections only scripts show (site/js_sections.py)")  # fmt: skip
    parser.add_argument("--scale-tags", type=int, default=0, metavar="N",
                        help="add N tags of 20 new stories (site/scale.py)")  # fmt: skip
    parser.add_argument("--tag-generations", action="store_true",
                        help="add the 2022, markup-variant and 'changed' tag pages "
                             "(topics_crawler/site/generations.py)")  # fmt: skip
    parser.add_argument("--topic-graph", action="store_true",
                        help="give the related tags pages of their own, four hops deep "
                             "(topics_crawler/site/topic_graph.py)")  # fmt: skip
    parser.add_argument("--rate-limit", type=float, default=0.0, metavar="N",
                        help="token bucket: 429 + Retry-After past N requests/s")  # fmt: skip
    parser.add_argument("--rate-burst", type=float, default=None, metavar="B",
                        help="tokens the bucket holds (default: N)")  # fmt: skip
    parser.add_argument("--waf", action="store_true",
                        help="refuse plain HTTP with Cloudflare's WAF page; serve browsers "
                             "(topics_crawler/site/refusals.py)")  # fmt: skip
    parser.add_argument("--challenge", action="store_true",
                        help="put every page behind a managed challenge a browser clears "
                             "(topics_crawler/site/refusals.py)")  # fmt: skip
    parser.add_argument("--graphql-refused", action="store_true",
                        help="refuse every POST /_/graphql with 403, pages served "
                             "(a tag's history then comes from its day archive)")  # fmt: skip
    return parser


def fault_plan(spec: str) -> FaultPlan:
    """``--faults`` value: a :class:`FaultPlan`, or argparse's one-line usage error."""
    try:
        return FaultPlan.parse(spec)
    except (TypeError, ValueError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGTERM stops the server like Ctrl-C (process managers send TERM)."""
    raise KeyboardInterrupt


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    """Serve until Ctrl-C or SIGTERM; ``prog`` names the command in its help."""
    args = (build_parser(prog) if prog else build_parser()).parse_args(argv)
    if args.archive < 0 or args.latency < 0:
        print("--archive and --latency must not be negative", file=sys.stderr)
        return 2
    if args.tag_generations and args.topic_graph:
        print("--tag-generations and --topic-graph are two different sites", file=sys.stderr)
        return 2
    content = generations_site() if args.tag_generations else default_site()
    if args.topic_graph:
        content = topic_graph_site()
    if args.archive:
        content = content.with_archive(ARCHIVE_TAG, args.archive, seed=0)
    if args.scale_tags > 0:
        content = with_scale_tags(content, args.scale_tags)
    content.graphql_refused = args.graphql_refused
    server = SiteServer(
        content,
        latency=args.latency / 1000,
        access_log=args.access_log,
        port=args.port,
        faults=args.faults,
        js_sections=args.js_sections,
        rate_limit=TokenBucket(args.rate_limit, args.rate_burst) if args.rate_limit > 0 else None,
        refusals=Refusals(waf=args.waf, challenge=args.challenge)
        if args.waf or args.challenge
        else None,
    )
    try:
        server.start()
    except OSError as exc:
        print(f"cannot bind port {args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(server.base_url, flush=True)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
