"""The data of the 2026 variants: writers, publications, posts and the tag cases built from
them (other tags, ids, names, counts, dates, URLs than the captures); see
:mod:`tests.variants_2026`."""

from __future__ import annotations

from tests.variants_2026_state import Post, Pub, TagCase, Writer

ADA = Writer("5a1e0c9d2b34", "ada-kowalska", "Ada Kowalska", "1*Qw3rTy9UiOp1AsDfGh2JkL.png")
BEN = Writer("c0ffee12ab9", "benoit-r", "Benoît Rousseau", "0*ZxCvBnM4567LkJhG", subdomain=True)
CHO = Writer("77d3a9e10b5c", "cho.min", "Cho Min-jun", "1*PoIuYtReWq0987LkJh6G.jpeg")
DEV = Writer("e41b2c3d4f50", "devika-n", "Devika Nair", "1*MnBvCxZ1234AsDfGhJkL.png")
EMI = Writer("9a8b7c6d5e4f", "emil_s", "Emil Sørensen", "0*AbCdEfGh12345678")
SYS = Pub("3c2b1a0f9e8d", "systems-weekly", "Systems Weekly")
OXI = Pub("0a9b8c7d6e5f", "oxidized", "Oxidized", domain="oxidized.dev")

P1 = Post("1a2b3c4d5e6f", "Why Our Borrow Checker Errors Halved After One Refactor", "why-our-"
          "borrow-checker-errors-halved-after-one-refactor", ADA, "2026-09-12T08:15:02Z",
          "2026-09-13T10:00:00Z", 312, 7, True, ["rust", "programming", "compilers"],
          "1*R1u2s3T4a5B6c7D8e9F0gH.png", "Lifetimes were never the problem; ownership of "
          "the cache was.", SYS)  # fmt: skip
P2 = Post("2b3c4d5e6f70", "Async Rust Without Tears", "async-rust-without-tears", BEN,
          "2026-09-14T21:40:59Z", "2026-09-14T21:40:59Z", 48, 0, False, ["rust", "async"],
          "0*TeArS0123456789a", "A field guide to executors for people who ship.")  # fmt: skip
P3 = Post("3c4d5e6f7081", "Zero-Copy Parsing in Practice", "zero-copy-parsing-in-practice", CHO,
          "2026-09-09T02:03:04Z", "2026-09-10T05:06:07Z", 1534, 21, True, ["rust", "parsing"],
          "1*ZeroCopy9876543210AbC.jpeg", "Borrowing from the input buffer, safely.",
          OXI)  # fmt: skip
# postings only (no entity, no card): a cross-post on Substack, one on a custom domain
P4 = Post("4d5e6f708192", "What I Learned Porting a Game Engine", "what-i-learned-porting-a-game-"
          "engine", DEV, "2026-09-15T06:00:00Z", "2026-09-15T07:30:00Z", 0, 0, False, [],
          "1*Engine4321DcBa8765HgFe.png",
          canonical="https://devika.substack.com/p/what-i-learned-porting-a-game")  # fmt: skip
P5 = Post("5e6f708192a3", "Traits, Generics and the Cost of Abstraction", "traits-generics-and-"
          "the-cost-of-abstraction", EMI, "2026-09-15T05:10:11Z", "2026-09-15T05:10:11Z", 0, 0,
          True, [], "0*Traits00Generics11", pub=OXI)  # fmt: skip
P6 = Post("6f708192a3b4", "Embedded Rust on a Budget", "embedded-rust-on-a-budget", ADA,
          "2026-09-15T04:00:00Z", "2026-09-15T04:00:00Z", 0, 0, False, [],
          "1*Budget55Embedded66Rust.png",
          canonical="https://dev.to/ada_kowalska/embedded-rust-on-a-budget-4k2j")  # fmt: skip

RUST = TagCase(
    name="rust-2026",
    slug="rust",
    title="Rust",
    post_count=48213,
    related=[("programming", None), ("rust-lang", "Rust Lang"), ("webassembly", None),
             ("systems-programming", "Systems Programming"), ("golang", None)],
    feed_key="tagFeed:trendingStories(mode:TOP_MONTH,tagSlug:rust,limit:4)",
    feed_ids=["3c4d5e6f7081", "a0b1c2d3e4f5", "1a2b3c4d5e6f", "b1c2d3e4f5a6"],
    newest_ids=["2b3c4d5e6f70", "c2d3e4f5a6b7"],
    posts=[P1, P2, P3],
    cards=[P2, P1],
    postings=[P4, P5, P2, P6],
    page_postings=[P2],
    follow=[CHO, SYS, DEV],
    seed=2026,
)  # fmt: skip

REFS_ONLY = TagCase(
    name="webassembly-2026-refs-only",
    slug="webassembly",
    title="WebAssembly",
    post_count=6120,
    related=[("rust", None), ("javascript", None), ("wasi", None)],
    feed_key='tagFeed:popularStories({"mode":"TOP_WEEK","tagSlug":"webassembly","limit":3})',
    feed_ids=["d3e4f5a6b7c8", "e4f5a6b7c8d9", "f5a6b7c8d9e0"],
    newest_ids=["a6b7c8d9e0f1", "d3e4f5a6b7c8"],
    posts=[],
    cards=[],
    postings=[],
    page_postings=[P6, P4],
    seed=7,
)  # fmt: skip

KUBE = TagCase(
    name="kubernetes-2026-entities",
    slug="kubernetes",
    title="Kubernetes",
    post_count=91004,
    related=[("docker", "Docker"), ("devops", "DevOps"), ("cloud-computing", "Cloud Computing")],
    feed_key="tagFeed:editorsPicks(limit:2,tagSlug:kubernetes,mode:HOT)",
    feed_ids=["708192a3b4c5"],
    newest_ids=[],
    posts=[Post("708192a3b4c5", "Pods, Plainly", "pods-plainly", EMI, "2026-08-30T11:11:11Z",
                "2026-09-01T00:00:00Z", 2048, 33, False, ["kubernetes", "devops"],
                "1*Pods1Plainly2Kube3.png", "What a pod is once you stop drawing boxes.")],
    cards=[],
    postings=[],
    page_postings=[],
    follow=[EMI, OXI],
    seed=11,
)  # fmt: skip

TAG_CASES = (RUST, REFS_ONLY, KUBE)
