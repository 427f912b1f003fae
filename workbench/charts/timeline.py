"""Run timeline: cumulative spent and raw against the grant; prompt per turn against the context budget;
vertical markers where wrap-up, landing, prune, conclude and stop fire and where the replay diverges."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from workbench.charts.style import MARKER_STYLE, TOKENS, dress, figure
from workbench.govern.verdict import StopReason
from workbench.trace.schema import EventKind, Run

TIMELINE_COLUMNS = ("turn", "spent", "raw", "prompt")


def _marker_kind(kind: str) -> str:
    return "stop" if kind.startswith("stop") else kind


def _draw_markers(ax: Axes, markers: list[tuple[str, int]]) -> None:
    for kind, turn in markers:
        colour, style = MARKER_STYLE.get(_marker_kind(kind or "prune"), ("#444444", "-"))
        ax.axvline(turn, color=colour, linestyle=style, linewidth=1.4, alpha=0.9)


def _marker_legend(markers: list[tuple[str, int]]) -> tuple[list[Line2D], list[str]]:
    """One legend entry per kind, naming the turns it fired at (labels never sit on the plot)."""
    turns: dict[str, list[int]] = {}
    for kind, turn in markers:
        turns.setdefault(kind or "prune", []).append(turn)
    handles, labels = [], []
    for kind, at in turns.items():
        colour, style = MARKER_STYLE.get(_marker_kind(kind), ("#444444", "-"))
        handles.append(Line2D([], [], color=colour, linestyle=style, linewidth=1.4))
        shown = ", ".join(str(t) for t in sorted(set(at))[:4]) + (" …" if len(set(at)) > 4 else "")
        labels.append(f"{kind} (turn {shown})")
    return handles, labels


def timeline_chart(
    turns: pd.DataFrame,
    *,
    grant: int | None,
    markers: Iterable[tuple[str, int]] = (),
    context_length: int | None = None,
    budget: pd.Series | None = None,
    estimate: pd.Series | None = None,
    stop_turn: int | None = None,
    references: dict[str, float] | None = None,
    title: str = "",
) -> Figure:
    """The timeline of one run under one policy.

    ``turns``: one row per recorded turn with ``turn``, ``spent`` and ``raw`` (cumulative, tokens) and
    ``prompt`` (tokens that call sent). ``estimate``: the context manager's calibrated estimate of each
    prompt (what its pruning reads). ``markers``: ``(kind, turn)`` pairs. ``budget``: the context
    manager's per-turn prompt budget (tokens), when a context length is set. Turns after ``stop_turn`` are
    what the recording did and the policy would have cut; they are shaded. ``references``: extra horizontal
    lines on the cumulative panel (label → tokens), e.g. an invariant's raw ceiling.
    """
    missing = [c for c in TIMELINE_COLUMNS if c not in turns.columns]
    if missing:
        raise ValueError(f"timeline frame lacks column(s) {missing}")
    markers = sorted(markers, key=lambda m: (m[1], m[0]))
    fig = figure(11.5, 7)
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(3, 2))
    x = turns["turn"]
    top.plot(x, turns["spent"], color="#1f77b4", linewidth=2, label="spent (billed, cache-discounted)")
    top.plot(x, turns["raw"], color="#ff7f0e", linewidth=1.5, label="raw (prompt + completion)")
    if grant:
        top.axhline(grant, color="#2ca02c", linewidth=1.5, label=f"grant {grant:,}")
    for label, value in (references or {}).items():
        top.axhline(value, color="#8c564b", linewidth=1.2, linestyle="-.", label=label)
    dress(top, y="cumulative tokens", yfmt=TOKENS, grid=True)
    top.set_ylim(0, max(float(turns["raw"].max()), float(grant or 0), *(references or {}).values()) * 1.08)

    bottom.plot(x, turns["prompt"], color="#17becf", linewidth=1.8, label="prompt sent")
    if estimate is not None:
        bottom.plot(
            x,
            estimate,
            color="#9467bd",
            linewidth=1.2,
            linestyle=":",
            label="manager's estimate (calibrated)",
        )
    if budget is not None:
        bottom.step(x, budget, where="mid", color="#9467bd", linewidth=1.5, label="context budget")
    if context_length:
        bottom.axhline(context_length, color="#d62728", linewidth=1.2, label=f"window {context_length:,}")
    dress(bottom, "turn (model call index)", "prompt tokens per call", yfmt=TOKENS, grid=True)
    ceiling = max(
        float(turns["prompt"].max()),
        float(context_length or 0),
        float(estimate.max()) if estimate is not None else 0.0,
    )
    bottom.set_ylim(0, ceiling * 1.15)

    if stop_turn is not None and stop_turn < int(x.max()):
        for ax in (top, bottom):
            ax.axvspan(stop_turn + 0.5, float(x.max()) + 0.5, color="#bbbbbb", alpha=0.3, lw=0)
    _draw_markers(top, markers)
    _draw_markers(bottom, markers)

    handles, labels = top.get_legend_handles_labels()
    more_h, more_l = _marker_legend(markers)
    handles += more_h
    labels += more_l
    if stop_turn is not None and stop_turn < int(x.max()):
        handles.append(Line2D([], [], color="#bbbbbb", linewidth=8, alpha=0.5))
        labels.append(f"cut by the policy (after turn {stop_turn})")
    top.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, framealpha=0.9)
    bottom.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, framealpha=0.9)
    fig.suptitle(title or "Run timeline", fontsize=12)
    return fig


def timeline_frame(run: Run) -> pd.DataFrame:
    """Per recorded turn: cumulative ``spent`` (the cost meter, ``workbench.govern.cost``) and ``raw``
    (prompt + completion), and the ``prompt`` that call sent (tokens; 0 where unreported)."""
    from workbench.govern.cost import Totals

    totals = Totals()
    rows = []
    for i, t in enumerate(run.turns):
        totals = totals.add(t.usage.prompt, t.usage.cached, t.usage.completion)
        rows.append(
            {
                "turn": i,
                "spent": totals.spent(),
                "raw": totals.prompt + totals.completion,
                "prompt": t.usage.prompt or 0,
            }
        )
    return pd.DataFrame(rows, columns=list(TIMELINE_COLUMNS))


def result_markers(result: Any) -> list[tuple[str, int]]:
    """``(kind, turn)`` for everything a ReplayResult says fired, including its context replay's prunes."""
    out: list[tuple[str, int]] = []
    for attr, kind in (
        ("wrapup_at", "wrap-up"),
        ("landing_started_at", "landing"),
        ("concluded_at", "conclude"),
        ("diverges_at", "diverges"),
    ):
        turn = getattr(result, attr, None)
        if turn is not None:
            out.append((kind, int(turn)))
    ctx = getattr(result, "context", None)
    for event in getattr(ctx, "events", None) or []:
        if event.kind in {EventKind.PRUNE, EventKind.CONTEXT_TRUNCATED} and event.turn is not None:
            out.append((event.kind, int(event.turn)))
    if (
        not getattr(result, "censored", False)
        and result.stop_reason != StopReason.DONE
        and result.stop_turn >= 0
    ):
        out.append((f"stop: {result.stop_reason}", int(result.stop_turn)))
    # One prune label per run is enough to read; later prunes keep their lines.
    first = next((i for i, (kind, _) in enumerate(out) if kind == "prune"), None)
    return [("prune" if i == first else "", t) if k == "prune" else (k, t) for i, (k, t) in enumerate(out)]


def run_timeline(
    run: Run, result: Any, *, title: str = "", references: dict[str, float] | None = None
) -> Figure:
    """The timeline of ``run`` under the policy ``result`` (a ReplayResult) was replayed with."""
    policy = result.policy
    ctx = getattr(result, "context", None)
    budget = estimate = None
    if ctx is not None and hasattr(ctx, "to_frame"):
        rows = ctx.to_frame()
        if "budget" in rows.columns and len(rows) == len(run.turns):
            budget = rows["budget"].reset_index(drop=True)
            if "calibrated_estimate" in rows.columns:
                estimate = rows["calibrated_estimate"].reset_index(drop=True)
    return timeline_chart(
        timeline_frame(run),
        grant=policy.grant,
        markers=result_markers(result),
        context_length=policy.context_length,
        budget=budget,
        estimate=estimate,
        stop_turn=result.stop_turn if not result.censored else None,
        references=references,
        title=title or f"{run.run_id} under {policy.label}",
    )


def replay_timeline(run: Run, policy: Any, *, title: str = "") -> Figure:
    """Replay ``run`` under ``policy`` (``workbench.replay.replay``) and draw its timeline — one call for a
    notebook cell or a widget callback."""
    from workbench.replay import replay

    return run_timeline(run, replay(run, policy), title=title)
