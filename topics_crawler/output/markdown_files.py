"""One Markdown file per story, with YAML front matter, in the layout Hugo or Jekyll reads.

``topics-crawler markdown DATASET OUT [--layout hugo|jekyll]`` (:mod:`topics_crawler.cli.markdown`)
writes, for each story of the dataset that has a body:

* ``hugo``: ``OUT/content/posts/<date>-<slug>.md``, images in ``OUT/static/images/``;
* ``jekyll``: ``OUT/_posts/<date>-<slug>.md`` (a story Medium gives no date:
  ``OUT/_drafts/<slug>.md``), images in ``OUT/images/``;

``<slug>`` is the last segment of the story's URL (its title slug and id). The front matter
(:func:`front_matter`) holds the title, the slug (the URL both generators give the page),
subtitle (also as ``description``), author,
publication, dates (``date``, ``lastmod`` / ``last_modified_at``), tags, canonical URL,
claps with the time they were read (``claps_as_of``), the member-only flag, the access level
and the preview's share (:mod:`topics_crawler.items.access`) and Medium's id;
the body is the story's Markdown (a member-only story's preview ends with a line saying
so), its figures pointing at the images the crawl stored (``-s IMAGES_ENABLED=1``), copied
beside the posts and linked from the site root (``/images/full/<sha1>.jpg``); a figure
without a stored copy keeps its Medium URL.

A re-run writes only the files whose content changed (``OUT/.topics-crawler-markdown.json``
keeps each story's file and digest; without it, files are compared byte for byte), removes
the file of a story whose name changed, and copies only missing images. Each file is
written whole (a temporary file renamed over it), so a killed export leaves every file
complete and the next run finishes the job.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from topics_crawler.pages.markdown import with_image_links

STATE_NAME = ".topics-crawler-markdown.json"
IMAGES_URL = "/images/"
#: Story columns the export reads (never the plain-text body).
COLUMNS = (
    "story_id",
    "url",
    "title",
    "subtitle",
    "author_username",
    "author_name",
    "publication_name",
    "published_at",
    "updated_at",
    "tags",
    "claps",
    "scraped_at",
    "is_member_only",
    "access",
    "preview_share",
    "markdown",
    "images",
)
_SLUG_RE = re.compile(r"[^a-z0-9]+")
#: Characters a YAML double-quoted scalar must not hold as they are: C0/C1 controls, DEL, and
#: what YAML 1.1 (Jekyll's and PyYAML's parser) reads as a line break or a byte order mark.
_YAML_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")


@dataclass(frozen=True)
class Layout:
    """Where one static site generator wants posts, undated posts and static files."""

    posts: str
    undated: str
    static: str


LAYOUTS: dict[str, Layout] = {
    "hugo": Layout(posts="content/posts", undated="content/posts", static="static"),
    "jekyll": Layout(posts="_posts", undated="_drafts", static=""),
}


@dataclass
class ExportResult:
    """What one export did."""

    written: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    without_body: int = 0
    images_copied: int = 0

    @property
    def stories(self) -> int:
        return len(self.written) + self.unchanged

    def summary(self) -> str:
        parts = [
            f"{self.stories} stories: {len(self.written)} written, {self.unchanged} unchanged",
            f"{len(self.removed)} renamed files removed" if self.removed else "",
            f"{self.without_body} without a body skipped" if self.without_body else "",
            f"{self.images_copied} images copied" if self.images_copied else "",
        ]
        return ", ".join(part for part in parts if part)


# --- front matter -------------------------------------------------------------------------


def yaml_value(value: Any) -> str:
    """One YAML value that Hugo's and Jekyll's parsers (YAML 1.2 and 1.1) read back as given:
    strings double-quoted (JSON escapes, plus the characters YAML 1.1 would fold), numbers
    and booleans plain, lists in flow style."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(yaml_value(item) for item in value) + "]"
    text = json.dumps(str(value), ensure_ascii=False)
    return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def front_matter(story: Mapping[str, Any]) -> str:
    """The ``---`` block of a story's file (absent values are left out; timestamps plain, so
    both generators read them as dates)."""
    fields: list[tuple[str, Any, bool]] = [
        ("title", story.get("title"), False),
        ("slug", file_slug(story), False),
        ("subtitle", story.get("subtitle"), False),
        ("description", story.get("subtitle"), False),
        ("author", story.get("author_name") or story.get("author_username"), False),
        ("author_username", story.get("author_username"), False),
        ("publication", story.get("publication_name"), False),
        ("date", story.get("published_at"), True),
        ("lastmod", story.get("updated_at"), True),
        ("last_modified_at", story.get("updated_at"), True),
        ("tags", list(story.get("tags") or []), False),
        ("canonical_url", story.get("url"), False),
        ("claps", story.get("claps"), False),
        ("claps_as_of", story.get("scraped_at") if story.get("claps") is not None else None, True),
        ("member_only", story.get("is_member_only"), False),
        ("access", story.get("access"), False),
        ("preview_share", story.get("preview_share"), False),
        ("medium_id", story.get("story_id"), False),
    ]
    lines = ["---"]
    for name, value, timestamp in fields:
        if value is None or value == "":
            continue
        lines.append(f"{name}: {value if timestamp else yaml_value(value)}")
    lines.append("---")
    return "\n".join(lines) + "\n"


# --- one story ----------------------------------------------------------------------------


def file_slug(story: Mapping[str, Any]) -> str:
    """The file name's slug: the URL's last segment (title slug and id), else the title's."""
    story_id = str(story.get("story_id") or "")
    last = str(story.get("url") or "").rstrip("/").rsplit("/", 1)[-1].lower()
    if story_id and last.endswith(story_id) and re.fullmatch(r"[a-z0-9-]+", last):
        return last
    title = _SLUG_RE.sub("-", str(story.get("title") or "").lower()).strip("-")[:80].strip("-")
    return f"{title}-{story_id}" if title else story_id


def story_path(story: Mapping[str, Any], layout: Layout) -> str:
    """The file of a story, relative to the export folder."""
    published = str(story.get("published_at") or "")
    if re.match(r"\d{4}-\d{2}-\d{2}T", published):
        return f"{layout.posts}/{published[:10]}-{file_slug(story)}.md"
    return f"{layout.undated}/{file_slug(story)}.md"


def stored_images(story: Mapping[str, Any]) -> dict[str, str]:
    """URL → the stored copy's path (``images/full/….jpg``, relative to the dataset) of each
    image the crawl stored for the story."""
    return {
        str(image["url"]): str(image["path"])
        for image in story.get("images") or []
        if isinstance(image, Mapping) and image.get("url") and image.get("path")
    }


def site_image_path(stored: str) -> str | None:
    """Where a stored image goes under the site's static folder (``images/full/x.jpg``);
    None for a path outside the dataset's ``images/`` (an ``IMAGES_STORE`` of its own)."""
    if not stored.startswith("images/") or ".." in stored.split("/"):
        return None
    return stored


def story_text(story: Mapping[str, Any]) -> str:
    """The whole file of a story: front matter, a blank line, the body."""
    local = {
        url: IMAGES_URL + site.removeprefix("images/")
        for url, stored in stored_images(story).items()
        if (site := site_image_path(stored)) is not None
    }
    body = with_image_links(str(story.get("markdown") or ""), local)
    return f"{front_matter(story)}\n{body.rstrip()}\n"


# --- the export ---------------------------------------------------------------------------


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def write_atomically(path: Path, data: bytes) -> None:
    """``data`` at ``path``, whole or not at all (a temporary file renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def read_state(out_dir: Path) -> dict[str, list[str]]:
    """Story id → ``[file, digest]`` of the previous export (empty when unreadable)."""
    try:
        state = json.loads((out_dir / STATE_NAME).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def export_stories(
    stories: Iterable[Mapping[str, Any]],
    dataset_dir: Path,
    out_dir: Path,
    layout: Layout,
) -> ExportResult:
    """Write the files of ``stories`` (rows of ``dataset_dir``) into ``out_dir``."""
    result = ExportResult()
    previous = read_state(out_dir)
    state: dict[str, list[str]] = {}
    for story in stories:
        story_id = str(story.get("story_id") or "")
        if not story_id or not story.get("markdown"):
            result.without_body += 1
            continue
        relative = story_path(story, layout)
        text = story_text(story)
        state[story_id] = [relative, digest(text)]
        result.images_copied += copy_images(story, dataset_dir, out_dir / layout.static)
        target = out_dir / relative
        if _unchanged(target, text, previous.get(story_id), state[story_id]):
            result.unchanged += 1
        else:
            write_atomically(target, text.encode("utf-8"))
            result.written.append(relative)
        old = previous.get(story_id)
        if old and old[0] != relative and (out_dir / old[0]).is_file():
            (out_dir / old[0]).unlink()
            result.removed.append(old[0])
    write_atomically(out_dir / STATE_NAME, json.dumps(state, sort_keys=True).encode("utf-8"))
    return result


def _unchanged(target: Path, text: str, old: list[str] | None, new: list[str]) -> bool:
    if not target.is_file():
        return False
    if old is not None:
        return old == new
    return target.read_bytes() == text.encode("utf-8")


def copy_images(story: Mapping[str, Any], dataset_dir: Path, static_dir: Path) -> int:
    """Copy (hard-link when it can) the story's stored images the site lacks; how many."""
    copied = 0
    for stored in stored_images(story).values():
        site = site_image_path(stored)
        if site is None:
            continue
        source = dataset_dir / stored
        target = static_dir / site
        if target.exists():  # named by its URL, as in the dataset: a file there is this image
            continue
        if not source.is_file():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source, target)
        except OSError:
            shutil.copyfile(source, target)
        copied += 1
    return copied


def only_author(stories: Iterable[Mapping[str, Any]], username: str) -> Iterator[Mapping[str, Any]]:
    """The stories of one author (username without ``@``, any case)."""
    wanted = username.removeprefix("@").lower()
    return (s for s in stories if str(s.get("author_username") or "").lower() == wanted)
