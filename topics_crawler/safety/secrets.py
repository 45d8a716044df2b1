"""Session secrets: sent only to medium.com, never written to a log.

``MEDIUM_COOKIE`` (a whole ``Cookie`` header value) and ``MEDIUM_SID`` (the
value of Medium's ``sid`` cookie) come from the environment or from settings
(environment first). :class:`MediumCookieMiddleware` adds them to ``https``
requests for medium.com and its subdomains on the default port only — never to
publication custom domains, other hosts, plain ``http`` or other ports — and
strips them from any other request. It takes them off the request again once
it is answered or failed, so a retry or redirect built from it (which may be
queued on disk under ``JOBDIR`` or in Redis) carries no secret; the retry gets
the cookie back when it is sent. Placed after Scrapy's
``CookiesMiddleware`` (which rewrites the ``Cookie`` header) and before the
mirror middleware, so the host checked is the canonical one; with
``MEDIUM_BASE_URL`` the mirror that stands in for medium.com receives them.

:class:`LogRedaction` (an extension) puts a :class:`RedactingFilter` on every
log handler of the root logger, so a secret never reaches a log line — not
even Scrapy's "Overridden settings" line when it was passed with ``-s``. The
telnet console's ``TELNETCONSOLE_PASSWORD`` (the console is off unless switched
on) is redacted the same way.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Self
from urllib.parse import urlsplit

from scrapy import Request, signals
from scrapy.exceptions import NotConfigured
from scrapy.http import Response

from topics_crawler.safety.links import mirror_netloc
from topics_crawler.urls import is_medium_domain

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

SECRET_NAMES = ("MEDIUM_COOKIE", "MEDIUM_SID", "TELNETCONSOLE_PASSWORD")
#: The secrets sent as the ``Cookie`` header (checked at start: ``settings_check``).
SESSION_SECRETS = ("MEDIUM_COOKIE", "MEDIUM_SID")
#: Request meta flag: the request went out with the user's Medium session (the story a
#: member sees: :func:`topics_crawler.items.access.seen_with_session`).
SESSION_META = "medium_session"
REDACTED = "[redacted]"
#: Shorter values are not treated as secrets (redacting "1" would mangle every log line).
MIN_SECRET_LENGTH = 6


def secret_values(
    settings: BaseSettings, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``{name: value}`` of every configured secret (environment before settings)."""
    env = os.environ if environ is None else environ
    found: dict[str, str] = {}
    for name in SECRET_NAMES:
        value = (env.get(name) or settings.get(name) or "").strip()
        if value:
            found[name] = value
    return found


def redact_arguments(arguments: Iterable[str]) -> list[str]:
    """Command-line ``arguments`` with the value of every secret setting replaced
    (``-s MEDIUM_COOKIE=…``, ``--set=MEDIUM_SID=…``), for anything that records them."""
    redacted = []
    for argument in arguments:
        option = next((o for o in ("--set=", "-s") if argument.startswith(o)), "")
        name, sep, _value = argument[len(option) :].partition("=")
        secret = sep and name in SECRET_NAMES
        redacted.append(f"{option}{name}={REDACTED}" if secret else argument)
    return redacted


def cookie_header(secrets: Mapping[str, str]) -> str | None:
    """The ``Cookie`` header value for medium.com requests, or None without secrets."""
    parts = [secrets["MEDIUM_COOKIE"]] if "MEDIUM_COOKIE" in secrets else []
    if "MEDIUM_SID" in secrets:
        parts.append(f"sid={secrets['MEDIUM_SID']}")
    return "; ".join(parts) or None


def redactable(secrets: Mapping[str, str]) -> list[str]:
    """Strings to hide: each value, and each ``name=value`` pair of a cookie string,
    longest first so a whole value is replaced before any of its parts."""
    strings: set[str] = set()
    for value in secrets.values():
        strings.add(value)
        for pair in value.split(";"):
            _name, sep, cookie_value = pair.strip().partition("=")
            if sep:
                strings.add(cookie_value.strip())
    return sorted((s for s in strings if len(s) >= MIN_SECRET_LENGTH), key=len, reverse=True)


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret string replaced by ``[redacted]``."""
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


class RedactingFilter(logging.Filter):
    """Logging filter rewriting records so that no secret string survives formatting."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self.secrets = list(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        record.msg = redact(message, self.secrets)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text, self.secrets)
        return True


class LogRedaction:
    """Extension installing :class:`RedactingFilter` on the root logger's handlers."""

    def __init__(self, redacting_filter: RedactingFilter) -> None:
        self.filter = redacting_filter
        self.handlers: list[logging.Handler] = []

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        secrets = redactable(secret_values(crawler.settings))
        if not secrets:
            raise NotConfigured  # no secrets: nothing to redact, nothing to log
        extension = cls(RedactingFilter(secrets))
        extension.install()
        crawler.signals.connect(extension.install, signal=signals.engine_started)
        crawler.signals.connect(extension.uninstall, signal=signals.engine_stopped)
        return extension

    def install(self) -> None:
        """Filter every current root handler (again after a handler was replaced)."""
        for handler in logging.getLogger().handlers:
            if self.filter not in handler.filters:
                handler.addFilter(self.filter)
                self.handlers.append(handler)

    def uninstall(self) -> None:
        for handler in self.handlers:
            handler.removeFilter(self.filter)
        self.handlers.clear()


def is_medium_request(url: str, mirror: str | None = None) -> bool:
    """True for ``https`` requests to medium.com or its subdomains on the default port,
    or to the mirror (``host[:port]``) that stands in for it."""
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower().rstrip(".")
        port = parts.port
    except ValueError:
        return False
    if mirror is not None and (f"{host}:{port}" if port else host) == mirror:
        return True
    return parts.scheme == "https" and port in (None, 443) and is_medium_domain(host)


class MediumCookieMiddleware:
    """Downloader middleware adding the session cookie to medium.com requests only."""

    def __init__(self, header: str, secrets: Iterable[str], mirror: str | None = None) -> None:
        self.header = header
        self.secrets = list(secrets)
        self.mirror = mirror

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        secrets = secret_values(crawler.settings)
        header = cookie_header(secrets)
        if header is None:
            raise NotConfigured  # anonymous crawl: the normal case, not worth a warning
        mirror = mirror_netloc(crawler.settings.get("MEDIUM_BASE_URL"))
        return cls(header, redactable(secrets) or [header], mirror)

    def process_request(self, request: Request) -> None:
        existing = (request.headers.get("Cookie") or b"").decode("latin-1")
        if is_medium_request(request.url, self.mirror):
            request.meta[SESSION_META] = True  # the page is what the user's session sees
            if self.header not in existing:
                merged = f"{existing}; {self.header}" if existing else self.header
                request.headers["Cookie"] = merged
        elif existing and any(secret in existing for secret in self.secrets):
            del request.headers["Cookie"]

    def process_response(self, request: Request, response: Response) -> Response:
        self.take_back(request)
        return response

    def process_exception(self, request: Request, exception: Exception) -> None:
        self.take_back(request)

    def take_back(self, request: Request) -> None:
        """Remove the session from ``request`` (copies made from it must not carry it)."""
        existing = (request.headers.get("Cookie") or b"").decode("latin-1")
        if self.header not in existing:
            return
        rest = "; ".join(
            part for part in existing.replace(self.header, "").split("; ") if part.strip()
        )
        if rest:
            request.headers["Cookie"] = rest
        else:
            del request.headers["Cookie"]

    def __repr__(self) -> str:  # never show the header itself
        return f"{type(self).__name__}(cookie={REDACTED})"
