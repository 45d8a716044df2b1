"""The crawl journal: only committed work survives, pages are done once all outputs are handled."""

from __future__ import annotations

from pathlib import Path

from topics_crawler.resume.journal import JOURNAL_NAME, CrawlJournal, PageProgress


def test_uncommitted_work_is_lost_and_committed_work_survives(tmp_path: Path) -> None:
    path = tmp_path / JOURNAL_NAME
    crashed = CrawlJournal(path)
    assert crashed.add("fp1", "https://medium.com/tag/a", 0, b"r1", replace=False)
    crashed.put_hashes("story:1", {"h1"})
    crashed.commit({"/out/items.jsonl": 120})
    crashed.mark_done("fp1")
    assert crashed.add("fp2", "https://medium.com/@a/s-0123456789ab", 1, b"r2", replace=False)
    crashed.put_hashes("story:2", {"h2"})
    # no commit: the process dies here (the open transaction is never written)

    restarted = CrawlJournal(path)
    assert [(p.fp, p.request) for p in restarted.pending()] == [("fp1", b"r1")]
    assert restarted.counts() == (0, 1)
    assert restarted.get_hashes("story:1") == {"h1"}
    assert restarted.get_hashes("story:2") == frozenset()
    assert restarted.feed_sizes() == {"/out/items.jsonl": 120}
    crashed.close()
    restarted.close()


def test_seen_requests_are_filtered_unless_rescheduled(tmp_path: Path) -> None:
    journal = CrawlJournal(tmp_path / JOURNAL_NAME)
    assert journal.add("fp", "https://medium.com/tag/a", 0, b"first", replace=False)
    assert not journal.add("fp", "https://medium.com/tag/a", 0, b"again", replace=False)
    journal.mark_done("fp")
    assert journal.counts() == (1, 0)
    assert journal.add("fp", "https://medium.com/tag/a", 5, b"retry", replace=True)
    pending = list(journal.pending())
    assert [(p.fp, p.priority, p.request) for p in pending] == [("fp", 5, b"retry")]
    assert pending[0].seq == journal.last_seq == 3
    journal.close()


def test_a_page_is_complete_when_its_callback_ended_and_every_output_is_handled() -> None:
    progress = PageProgress()
    progress.yielded["page"] = 3
    progress.finished["page"] = 3
    assert not progress.complete("page")  # the callback may still yield
    progress.output_done.add("page")
    progress.finished["page"] = 2
    assert progress.outputs_in_flight == 1
    assert not progress.complete("page")
    progress.finished["page"] = 3
    assert progress.complete("page")
    assert progress.outputs_in_flight == 0
    assert not progress.complete("page")  # forgotten once complete
