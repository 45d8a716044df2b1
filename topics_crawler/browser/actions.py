"""What the browser does on a page, as data: lists of scrapy-playwright ``PageMethod``s.

Every render ends with :data:`DOCUMENT_STATUS_JS`, whose result is the HTTP
status of the document finally shown (a challenge that reloads itself into the
real page is answered 403 first, 200 after). Tag pages first load more cards —
click "See more stories" or scroll — until enough cards are there, no new ones
came for a few rounds, or the time budget ends (:data:`LOAD_MORE_JS` returns
why it stopped). Waits that may legitimately time out (the page never goes
quiet, the challenge never clears) go through :func:`wait_quietly`, so they
end the wait, not the render.

:func:`abort_heavy_resource` is the ``PLAYWRIGHT_ABORT_REQUEST`` hook: images,
fonts and media are never downloaded.
"""

from __future__ import annotations

from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from playwright.async_api import Request as PlaywrightRequest
from scrapy_playwright.page import PageMethod

from topics_crawler.browser.config import BrowserConfig

#: Resource types a render never downloads (the parsers read markup and state only).
ABORTED_RESOURCE_TYPES = frozenset({"image", "font", "media"})
#: A listing card (``article[data-testid="post-preview"]``, see MARKUP.md); attached, not
#: necessarily visible (lazy cards are laid out off screen).
CARD_SELECTOR = 'article[data-testid="post-preview"]'

#: True once the document is no longer Cloudflare's managed challenge (its title, as in
#: ``topics_crawler.pages._blocked.CHALLENGE_TITLES``). A WAF refusal ("Attention
#: Required!") never clears by itself: nothing is waited for there.
CHALLENGE_CLEARED_JS = "() => !/^just a moment/i.test(document.title.trim())"

#: HTTP status of the document now shown (Navigation Timing ``responseStatus``), or null.
DOCUMENT_STATUS_JS = """() => {
  const entry = performance.getEntriesByType("navigation")[0];
  return entry && entry.responseStatus ? entry.responseStatus : null;
}"""

#: Load more cards until ``wanted`` distinct stories are listed (null: no limit), no new
#: card came for ``idleTries`` rounds, or ``budgetMs`` passed. A round clicks the
#: "See more stories" button when there is one (never a link: that would navigate away),
#: else scrolls to the bottom, then waits up to ``pauseMs`` for new cards.
LOAD_MORE_JS = """async ({wanted, idleTries, pauseMs, budgetMs, cardSelector}) => {
  const started = Date.now();
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const count = () => new Set(Array.from(document.querySelectorAll(cardSelector), (card) => {
    const target = card.querySelector("[data-href]");
    return target ? target.getAttribute("data-href") : card.textContent;
  })).size;
  const moreButton = () => Array.from(document.querySelectorAll("button")).find(
    (button) => /^\\s*(see|show) more stories\\s*$/i.test(button.textContent));
  let cards = count();
  let idle = 0;
  let rounds = 0;
  for (;;) {
    if (wanted !== null && cards >= wanted) return {cards, rounds, stop: "enough"};
    if (idle >= idleTries) return {cards, rounds, stop: "no_new_cards"};
    if (Date.now() - started >= budgetMs) return {cards, rounds, stop: "time_budget"};
    const button = moreButton();
    if (button) button.click(); else window.scrollTo(0, document.documentElement.scrollHeight);
    rounds += 1;
    const before = cards;
    const deadline = Math.min(Date.now() + pauseMs, started + budgetMs);
    while (Date.now() < deadline && count() === before) await sleep(50);
    cards = count();
    idle = cards > before ? 0 : idle + 1;
  }
}"""


async def wait_quietly(page: Page, method: str, *args: Any, **kwargs: Any) -> bool:
    """``page.<method>(*args, **kwargs)``; False instead of an error when the wait fails.

    A page that is closed under us still raises: that is a failed render.
    """
    try:
        await getattr(page, method)(*args, **kwargs)
    except PlaywrightError:
        if page.is_closed():
            raise
        return False
    return True


def abort_heavy_resource(request: PlaywrightRequest) -> bool:
    """``PLAYWRIGHT_ABORT_REQUEST``: drop images, fonts and media."""
    return request.resource_type in ABORTED_RESOURCE_TYPES


def settle_actions(config: BrowserConfig) -> list[PageMethod]:
    """Any page: get past a self-clearing challenge, then wait for the network to go quiet."""
    return [
        PageMethod(
            wait_quietly, "wait_for_function", CHALLENGE_CLEARED_JS, timeout=config.settle_ms
        ),
        PageMethod(wait_quietly, "wait_for_load_state", "networkidle", timeout=config.settle_ms),
    ]


def tag_page_actions(config: BrowserConfig, wanted: int | None) -> list[PageMethod]:
    """A tag page: settle, then load cards up to ``wanted`` stories (None: as many as come;
    0: none beyond the first screen), settle again, read the final status."""
    actions = [
        *settle_actions(config),
        PageMethod(wait_quietly, "wait_for_selector", CARD_SELECTOR, state="attached",
                   timeout=config.settle_ms),
    ]  # fmt: skip
    if wanted != 0:
        options = {
            "wanted": wanted,
            "idleTries": config.scroll_idle_tries,
            "pauseMs": config.scroll_pause_ms,
            "budgetMs": config.time_budget_ms,
            "cardSelector": CARD_SELECTOR,
        }
        actions.append(PageMethod("evaluate", LOAD_MORE_JS, options))
        actions.append(
            PageMethod(wait_quietly, "wait_for_load_state", "networkidle", timeout=config.settle_ms)
        )
    return [*actions, document_status_action()]


def entity_page_actions(config: BrowserConfig) -> list[PageMethod]:
    """A story, author or publication page: settle, read the final status."""
    return [*settle_actions(config), document_status_action()]


def document_status_action() -> PageMethod:
    """The last action of every render: the status of the document finally shown."""
    return PageMethod("evaluate", DOCUMENT_STATUS_JS)


def load_more_outcome(actions: list[Any]) -> dict[str, Any] | None:
    """What :data:`LOAD_MORE_JS` returned (``{cards, rounds, stop}``), if it ran."""
    for action in actions:
        if isinstance(action, PageMethod) and action.args[:1] == (LOAD_MORE_JS,):
            result = action.result
            return result if isinstance(result, dict) else None
    return None


def document_status(actions: list[Any]) -> int | None:
    """The status :data:`DOCUMENT_STATUS_JS` found, if it ran and the browser knew it."""
    for action in actions:
        if isinstance(action, PageMethod) and action.args[:1] == (DOCUMENT_STATUS_JS,):
            return action.result if isinstance(action.result, int) else None
    return None
