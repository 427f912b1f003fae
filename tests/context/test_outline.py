"""A context replay's outline (``ContextReplay.outline``, what a report's share sends back for the heat map): no
per-turn rows, and its events cut to kind and turn, one object per (turn, kind) pair, so a share's pickle writes
each once. What the report reads of it is the full replay's."""

from __future__ import annotations

import pickle

from tests.estimate.test_study_synthetic import TRUE, synthetic
from workbench.context.replay import replay_context
from workbench.govern.policy import Policy
from workbench.report.sweeps import _context_events


def test_an_outline_keeps_what_the_report_reads_and_shares_its_events() -> None:
    policy = Policy(context_length=12_000, reserve=1_000, safety=200)
    full = [replay_context(synthetic(f"r{k}", [200 + k] * 20 + [4_000, 1], TRUE), policy) for k in range(3)]
    outlines = [r.outline() for r in full]
    assert all(r.events and r.truncated_at == 21 for r in full)  # each prunes, then truncates: events to cut
    for f, o in zip(full, outlines, strict=True):
        assert o.rows == () and f.rows
        assert (o.first_prune_at, o.truncated_at, o.notes, o.budget) == (
            f.first_prune_at,
            f.truncated_at,
            f.notes,
            f.budget,
        )
        assert _context_events(o) == _context_events(f)  # the heat map's reading of it
        assert [(e.turn, e.kind, e.reason, e.data) for e in o.events] == [
            (e.turn, e.kind, None, {}) for e in f.events
        ]
    pairs = [(e.turn, e.kind, id(e)) for o in outlines for e in o.events]
    assert (
        len({p[:2] for p in pairs}) == len({p[2] for p in pairs}) < len(pairs)
    )  # one object per (turn, kind)
    sent = pickle.dumps(outlines)
    assert (
        len(sent) < len(pickle.dumps([f.outline().__class__(**{**f.__dict__, "rows": ()}) for f in full])) / 2
    )
    assert pickle.loads(sent) == outlines
