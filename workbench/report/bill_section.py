"""The report's bill section: what each context length (and observation masking) would have cost the corpus,
against the recorded bill (docs/counterfactual-bills.md, "What a window costs" in the report)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
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


def billable(leaves: Sequence[Run]) -> list[Run]:
    return [r for r in leaves if any(t.usage.prompt is not None for t in r.turns)]


def bill_rows(
    runs: Sequence[Run],
    context_lengths: Sequence[int | None],
    masks: Sequence[int | None],
    on_run: Callable[[Run, Any], None] | None = None,
) -> pd.DataFrame:
    """The section's frame over billable ``runs``: every recorded call billed under each context length (and
    none) x mask (``bill_grid``, ungoverned; ``on_run`` as there)."""
    from workbench.replay.bill_sweep import bill_grid

    lengths = list(dict.fromkeys([None, *context_lengths]))
    return _quiet(  # type: ignore[no-any-return]
        bill_grid, runs, context_lengths=lengths, masks=masks, governed=False, on_run=on_run
    )


def _quiet(work: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return work(*args, **kw)


def bill_section(
    leaves: Sequence[Run],
    context_lengths: Sequence[int | None],
    masks: Sequence[int | None] = REPORT_MASKS,
    parts: Sequence[pd.DataFrame | None] | None = None,
) -> BillSection | None:
    """The section over ``leaves`` (``None`` when no leaf has recorded usage to bill) from
    ``parts``, the frames billed already (``report.shares``; docs/scale.md, "The report"), else billed here."""
    from workbench.charts.bill import bill_chart, bill_panels
    from workbench.replay.bill_sweep import grid_totals

    runs = billable(leaves)
    if not runs:
        return None
    if parts is None:
        parts = [bill_rows(runs, context_lengths, masks)]
    parts = [p for p in parts if p is not None]
    frame = _quiet(pd.concat, parts, ignore_index=True).infer_objects() if len(parts) > 1 else parts[0]
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


def bill_context(section: BillSection | None) -> dict[str, Any] | None:
    """What the templates read: the words and the totals table in both renderings."""
    if section is None:
        return None
    from markupsafe import Markup

    from workbench.report.tables import MarkdownText, html_table, md_table

    shown = section.totals[list(SHOWN)].copy()
    for col in ("cf_usd", "recorded_usd"):
        shown[col] = shown[col].map(usd)  # money is always $1,234.56
    shown = shown.rename(columns=SHOWN)
    return {"words": section.words, "table": Markup(html_table(shown)), "md": MarkdownText(md_table(shown))}


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
