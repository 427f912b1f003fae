"""The report's bill section: what each context length (and observation masking) would have cost the corpus,
against the recorded bill, with the prompt cache modelled (docs/counterfactual-bills.md).

Kept apart from the report's other sections (its own module and template block, ``bill_section.*.j2``) so the
report can be rebuilt around it. Every recorded call is billed (no grant binds); runs the workbench cannot price
count in the token figures and leave USD unknown.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from workbench.format import usd
from workbench.trace.schema import Run

# The masks the report bills beside the windows: none, and the Complexity Trap's M = 10.
REPORT_MASKS: tuple[int | None, ...] = (None, 10)


@dataclass(frozen=True)
class BillSection:
    totals: pd.DataFrame
    figure: Figure
    runs: int
    words: str


BILL_PARALLEL_FROM = 32
"""Runs from which ``workers`` local processes bill them, each a contiguous share (fewer: this process)."""


def bill_section(
    leaves: Sequence[Run],
    context_lengths: Sequence[int | None],
    masks: Sequence[int | None] = REPORT_MASKS,
    workers: int | None = None,
) -> BillSection | None:
    """The section over ``leaves`` (``None`` when no leaf has recorded usage to bill; copies billed once).
    ``workers``: local processes that bill shares of the runs from ``BILL_PARALLEL_FROM`` runs (forked: the runs
    are not pickled; each run's rows are its own, so the frame is the one billed here)."""
    from workbench.charts.bill import bill_chart, bill_panels
    from workbench.replay.bill_sweep import bill_grid, grid_totals
    from workbench.scale.executor import local

    runs = [r for r in leaves if any(t.usage.prompt is not None for t in r.turns)]
    if not runs:
        return None
    lengths = list(dict.fromkeys([None, *context_lengths]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        executor = local(workers if len(runs) >= BILL_PARALLEL_FROM else 1)
        step = -(-len(runs) // (2 * executor.size)) if executor.size > 1 else len(runs)
        shares = [runs[i : i + step] for i in range(0, len(runs), step)]
        billed = executor.map(
            lambda share: bill_grid(share, context_lengths=lengths, masks=masks, governed=False), shares
        )
        parts = [part for _, part in sorted(billed, key=lambda got: got[0])]
        frame = pd.concat(parts, ignore_index=True).infer_objects() if len(parts) > 1 else parts[0]
    totals = grid_totals(frame).drop(columns=["grant"])
    totals["interval"] = [_interval(r) for _, r in totals.iterrows()]
    totals["verdict"] = [_verdict(r) for _, r in totals.iterrows()]
    totals["saved_usd_share"] = totals["saved_usd_share"].map(lambda x: "—" if pd.isna(x) else f"{x:+.1%}")
    totals["saved_spent_share"] = totals["saved_spent_share"].map(
        lambda x: "—" if pd.isna(x) else f"{x:+.1%}"
    )
    base = frame[frame["context_length"].isna() & frame["mask"].isna()]
    priced = int(base["cf_usd"].notna().sum())
    panels = bill_panels(frame)
    words = (
        f"{len(runs)} runs billed call by call under each context length, each with and without old observations "
        f"masked (mask 10: keep the last 10 turns' tool results); {priced} of them could be priced in USD. Prompts "
        "are the recorded ones minus what the policy removes; cache reads and writes come from the prompt-cache "
        "model of each run's provider (docs/cache-model.md). The replies after a policy first changes a request are "
        "the recorded ones: what the agent would have done with the changed transcript is unknown. "
        + _chart_words(panels, priced == len(runs) and "cf_usd_draws" in frame)
    )
    figure = bill_chart(frame, title="The bill against context length")
    return BillSection(totals=totals, figure=figure, runs=len(runs), words=words)


def _chart_words(panels: tuple[str, ...], intervals: bool) -> str:
    """What the chart draws, in words (only what is on it)."""
    if panels[0] == "usd":
        first = "The chart's left panel is the bill in USD per context length, one line per mask, the recorded bill dashed"
        first += (
            "; each point's error bar is its 90% interval from the cache model fitted per provider route (block size "
            "and miss share resampled, misses drawn call by call), and the table's sign says when a saving's sign is "
            "not robust."
            if intervals
            else "."
        )
    else:
        first = (
            "No run could be priced, so the chart shows the bill in cost-meter tokens per context length, one line per "
            "mask, the recorded spend dashed."
        )
    if "writes" in panels:
        return first + " The right panel is the tokens each policy writes to the prompt cache."
    return (
        first
        + " No policy writes to the prompt cache on these runs (0 cache-write tokens everywhere): no panel for it."
    )


def _interval(r: Any) -> str:
    if pd.isna(r.get("cf_usd_low")) or pd.isna(r.get("cf_usd_high")):
        return "—"
    return f"{usd(r['cf_usd_median'])} [{usd(r['cf_usd_low'])}–{usd(r['cf_usd_high'])}]"


def _verdict(r: Any) -> str:
    from workbench.replay.bill_interval import sign_words

    if r["context_length"] == "none" and r["mask"] == "none":
        return "the recorded bill"
    if pd.isna(r.get("saved_usd_share_low")) or pd.isna(r.get("saved_usd_share_high")):
        return "—"
    return sign_words(r["saved_usd_share_low"], r["saved_usd_share_high"])


def bill_context(section: BillSection | None, raw: type[str] = str) -> dict[str, Any] | None:
    """What the templates read: the words and the totals table in both renderings (``raw`` marks the Markdown
    table as already escaped: the renderer's ``MarkdownText``)."""
    if section is None:
        return None
    from markupsafe import Markup

    from workbench.report.tables import html_table, md_table

    shown = section.totals[list(SHOWN)].copy()
    for col in ("cf_usd", "recorded_usd"):
        shown[col] = shown[col].map(usd)  # money is always $1,234.56
    shown = shown.rename(columns=SHOWN)
    return {
        "words": section.words,
        "table": Markup(html_table(shown)),
        "md": raw(md_table(shown)),
    }


# The columns the report shows, key ones first and in words, so the table fits the page (the whole grid, every
# column, is `workbench bills` and `BillSection.totals`).
SHOWN = {
    "context_length": "context length",
    "mask": "masked after",
    "cf_usd": "bill USD",
    "interval": "bill USD, 90% interval",
    "recorded_usd": "recorded USD",
    "saved_usd_share": "USD saved",
    "verdict": "sign",
    "cf_spent": "cost-meter tokens",
    "saved_spent_share": "tokens saved",
    "cf_cache_write_tokens": "cache writes",
}
