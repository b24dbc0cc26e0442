"""SearchStats: keeps the search's table of common words in step with ANALYZE.

A search in a big scope asks which of its words are common in the whole table
(:mod:`agents_memory.store.search.lexemes`). ANALYZE (autovacuum, in the background) counts them;
this job copies them into ``search_lexemes`` when they changed, so a search looks its words up
instead of reading the statistics itself. Cheap when nothing changed: one digest of the
statistics per tick. Its first run in a database analyses the table first: a database upgraded
to the raised statistics target (migration 0007) would otherwise wait for autovacuum. Each tick
also merges the full-text index's pending list (``lexemes.merge_pending_words``): every word a
search looks up through the index reads that list whole.
"""

from __future__ import annotations

from agents_memory.coldpath.base import Job, JobContext
from agents_memory.coldpath.units import unit_of_work
from agents_memory.store.coldpath.coldqueue import JobReport
from agents_memory.store.search import lexemes


class SearchStatsJob(Job):
    name = "search_stats"

    def run(self, ctx: JobContext) -> JobReport:
        report = JobReport(self.name)
        with unit_of_work(ctx.conn):
            if not lexemes.copied_before(ctx.conn):
                lexemes.analyze_memory(ctx.conn)
            copied = lexemes.refresh_search_lexemes(ctx.conn)
            merged = lexemes.merge_pending_words(ctx.conn)
        if copied is None:
            report.skipped = 1
        else:
            report.processed = 1
            report.notes.append(f"copied {copied:,} common words from the table's statistics")
        if merged:
            report.notes.append(f"merged {merged:,} pages of new words into the full-text index")
        return report
