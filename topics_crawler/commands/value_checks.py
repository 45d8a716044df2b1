"""The small checks the settings table is built from
(:data:`topics_crawler.commands.settings_check.RULES`): each takes a setting's raw value
(a string when it came from ``-s``) and the settings, and returns why the value is wrong,
or None. Some are made by a function (``choice("a", "b")``, ``number(minimum=1)``).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from scrapy.settings import BaseSettings
from scrapy.utils.misc import load_object

#: ``check(value, settings)`` → why ``value`` is wrong, or None.
Check = Callable[[Any, BaseSettings], str | None]

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def choice(*allowed: str) -> Check:
    """One of ``allowed`` (case-insensitive)."""

    def check(value: Any, settings: BaseSettings) -> str | None:
        if str(value).strip().lower() in allowed:
            return None
        return f"{value!r} is not one of {', '.join(allowed)}"

    return check


def number(
    minimum: float | None = None, maximum: float | None = None, whole: bool = False
) -> Check:
    """A number (a whole one with ``whole``) within ``[minimum, maximum]``."""
    kind = "a whole number" if whole else "a number"

    def check(value: Any, settings: BaseSettings) -> str | None:
        try:
            parsed = int(str(value)) if whole else float(str(value))
        except ValueError:
            return f"{value!r} is not {kind}"
        if not math.isfinite(parsed):
            return f"{value!r} is not {kind}"
        if minimum is not None and parsed < minimum:
            return f"{value!r} is below {minimum:g}"
        if maximum is not None and parsed > maximum:
            return f"{value!r} is above {maximum:g}"
        return None

    return check


def flag(value: Any, settings: BaseSettings) -> str | None:
    """True/False, 1/0, yes/no, on/off."""
    if isinstance(value, bool | int) or str(value).strip().lower() in _TRUE | _FALSE:
        return None
    return f"{value!r} is not true or false"


def _writable(path: Path, what: str) -> str | None:
    """Why ``path`` (a directory or a file to create) cannot be written, or None."""
    existing = path
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    if existing != path and not existing.is_dir():
        return f"{what} {path} is not writable: {existing} is not a directory"
    if existing == path and what == "directory" and not path.is_dir():
        return f"{what} {path} is not writable: not a directory"
    if existing == path and what == "file" and path.is_dir():
        return f"{what} {path} is not writable: it is a directory"
    if not os.access(existing, os.W_OK):
        return f"{what} {path} is not writable: permission denied"
    return _probe(existing, path, what)


def _probe(existing: Path, path: Path, what: str) -> str | None:
    """Make (and remove) a directory in ``existing``: what ``os.access`` cannot tell (root
    may write anywhere, but not into ``/proc``; a read-only mount)."""
    if existing == path and what == "file":
        return None  # an existing file: its own permissions said it
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".topics-crawler-probe-", dir=existing))
    except OSError as exc:
        cause = exc.strerror or str(exc)
        return f"{what} {path} is not writable: cannot create anything in {existing} ({cause})"
    return None


def writable_dir(value: Any, settings: BaseSettings) -> str | None:
    """A directory that exists and is writable, or can be created."""
    return _writable(Path(str(value)).expanduser(), "directory") if str(value) else None


def writable_file(value: Any, settings: BaseSettings) -> str | None:
    """A file that is writable, or can be created."""
    return _writable(Path(str(value)).expanduser(), "file") if str(value) else None


def http_url(value: Any, settings: BaseSettings) -> str | None:
    try:
        parts = urlsplit(str(value))
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        return f"{value!r} is not an http(s) URL ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{value!r} is not an http(s) URL"
    return None


def redis_url(value: Any, settings: BaseSettings) -> str | None:
    try:
        parts = urlsplit(str(value))
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        return f"{value!r} is not a redis:// URL ({exc})"
    if parts.scheme not in ("redis", "rediss", "unix"):
        return f"{value!r} is not a redis://, rediss:// or unix:// URL"
    return None


def _items(value: Any) -> list[str]:
    """A list setting as Scrapy's ``getlist`` reads it (a string is split at commas)."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return [str(item) for item in value]


def port_list(value: Any, settings: BaseSettings) -> str | None:
    """TCP ports, as a list or comma-separated."""
    try:
        ports = _items(value)
    except (TypeError, ValueError):
        return f"{value!r} is not a list of ports"
    for port in ports:
        if not port.isdigit() or not 0 < int(port) < 65536:
            return f"{port!r} is not a TCP port"
    return None


def host_list(value: Any, settings: BaseSettings) -> str | None:
    """Host names, as a list or comma-separated (no scheme, no path)."""
    try:
        hosts = _items(value)
    except (TypeError, ValueError):
        return f"{value!r} is not a list of host names"
    for host in hosts:
        if not host or any(c in host for c in "/:@ ?#"):
            return f"{host!r} is not a host name"
    return None


def _json_object(value: Any) -> Mapping[Any, Any] | str:
    """``value`` as a mapping (a dict, or its JSON text), else the error line."""
    try:
        mapping = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        return f"{value!r} is not a JSON object"
    if not isinstance(mapping, Mapping):
        return f"{value!r} is not a JSON object"
    return mapping


def count_map(value: Any, settings: BaseSettings) -> str | None:
    """``{name: whole number >= 0}`` (a dict, or its JSON)."""
    mapping = _json_object(value)
    if isinstance(mapping, str):
        return mapping
    for key, count in mapping.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            return f"{key}: {count!r} is not a whole number >= 0"
    return None


def importable(value: Any, settings: BaseSettings) -> str | None:
    """An import path (``package.module.Name``) that imports."""
    if not isinstance(value, str):
        return None  # a class or function given directly
    try:
        load_object(value)
    except (ImportError, NameError, ValueError, AttributeError) as exc:
        return f"{value!r} cannot be imported ({type(exc).__name__}: {exc})"
    return None


def importable_or_off(value: Any, settings: BaseSettings) -> str | None:
    """:func:`importable`, or empty: the component is off (``-s RATE_BUDGET_CLASS=``)."""
    return importable(value, settings) if value != "" else None


def key_prefix(value: Any, settings: BaseSettings) -> str | None:
    """A Redis key prefix: some characters, no spaces, no glob characters."""
    text = str(value)
    if not text or any(c.isspace() or c in "*?[]" for c in text):
        return f"{value!r} is not a usable key prefix (no spaces, no *?[])"
    return None


def number_map(minimum: float = 0.0, maximum: float | None = None) -> Check:
    """``{name: number within [minimum, maximum]}`` (a dict, or its JSON)."""

    def check(value: Any, settings: BaseSettings) -> str | None:
        mapping = _json_object(value)
        if isinstance(mapping, str):
            return mapping
        within = number(minimum=minimum, maximum=maximum)
        for key, item in mapping.items():
            problem = within(item, settings) if not isinstance(item, bool) else "not a number"
            if problem is not None:
                return f"{key}: {problem}"
        return None

    return check


def status_list(value: Any, settings: BaseSettings) -> str | None:
    """HTTP status codes, as a list or comma-separated."""
    try:
        codes = _items(value)
    except TypeError:
        return f"{value!r} is not a list of HTTP status codes"
    for code in codes:
        if not code.isdigit() or not 100 <= int(code) <= 599:
            return f"{code!r} is not an HTTP status code"
    return None


def loopback_host(value: Any, settings: BaseSettings) -> str | None:
    """Control servers listen on the loopback interface only."""
    if str(value).strip().lower() in ("127.0.0.1", "::1", "localhost"):
        return None
    return f"{value!r} is not a loopback address (control servers listen on 127.0.0.1 only)"


def telnet_console(value: Any, settings: BaseSettings) -> str | None:
    """On only with a password (a generated one would be written to the log)."""
    problem = flag(value, settings)
    if problem is not None:
        return problem
    if settings.getbool("TELNETCONSOLE_ENABLED") and not settings.get("TELNETCONSOLE_PASSWORD"):
        return "on, but TELNETCONSOLE_PASSWORD is not set (a generated one would be logged)"
    return None


def header_value(value: Any, settings: BaseSettings) -> str | None:
    """A value an HTTP header can carry as it is: no line break, no control character,
    Latin-1 only (a session secret: the message never repeats the value)."""
    text = str(value).strip()
    if "\r" in text or "\n" in text:
        return "holds a line break (a header cannot carry one): copy the value again"
    control = next((c for c in text if ord(c) < 0x20 or ord(c) == 0x7F), None)
    if control is not None:
        return f"holds a control character ({ord(control):#04x}): copy the value again"
    if any(ord(c) > 0xFF for c in text):
        return "holds characters an HTTP header cannot carry (not Latin-1)"
    return None


def images_enabled(value: Any, settings: BaseSettings) -> str | None:
    """A flag; when on, Pillow must be installed and the images must have a place."""
    problem = flag(value, settings)
    if problem is not None or not settings.getbool("IMAGES_ENABLED"):
        return problem
    from topics_crawler.pipelines.images import images_store  # noqa: PLC0415 (Scrapy's media)

    try:
        import PIL  # noqa: F401, PLC0415
    except ImportError:
        return "on, but Pillow is not installed: pip install 'topics_crawler[images]'"
    if images_store(settings) is None:
        return "on, but there is nowhere to store images: set IMAGES_STORE or DATASET_DIR, or -o"
    return None
