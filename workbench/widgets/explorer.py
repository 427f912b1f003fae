"""The explorer: pick a run or segment, move the grant, context length, calibration factor and rule set, and see
the timeline and the decisions update: ``Explorer(corpus)`` (a Corpus, or any list of Runs) in a notebook.

A thin view over the public API (:func:`workbench.replay.replay` under a :class:`workbench.govern.Policy`, drawn by
:func:`workbench.charts.run_timeline`), so it shows what a notebook or the CLI would compute. The chart is a PNG in an
``ipywidgets.Image`` (not an Output area), so it updates the same in JupyterLab, a plain kernel and a test.
"""

from __future__ import annotations

import html
import io
from collections.abc import Iterable, Sequence

import ipywidgets as w
import matplotlib.pyplot as plt

from workbench.charts import run_timeline
from workbench.estimate.constants import CALIBRATION_SEED
from workbench.govern import Policy
from workbench.govern.policy import RULE_SETS
from workbench.replay import ReplayResult, replay
from workbench.trace.schema import Run

RECORDED = "recorded"
"""Rule-set choice meaning: the policy the run itself recorded (``Policy.recorded``), when it recorded one."""

NO_MANAGER = 0
"""Context-length choice meaning: no context-window manager (ipywidgets reads a ``None`` value as no selection)."""

CONTEXT_LENGTHS: tuple[tuple[str, int], ...] = (("none (no manager)", NO_MANAGER), ("8,192", 8_192),
                                                ("32,768", 32_768), ("65,536", 65_536),
                                                ("128,000", 128_000), ("200,000", 200_000),
                                                ("258,400", 258_400))  # fmt: skip
"""Windows offered by the context-length control: no manager (ADR-107's no-op) and common model windows."""

GRANT_RANGE = (20_000, 1_000_000, 10_000)
"""Grant slider: min, max, step (tokens of billed work)."""


OUTCOME_COLOURS = {
    "resolved": "#2ca02c",
    "finished": "#2ca02c",
    "unresolved": "#d62728",
    "unfinished": "#7f7f7f",
}
"""Outcome badge colours: succeeded green, failed red, an unlabelled run that did not finish grey."""
FATE_COLOURS = {"kept": "#2ca02c", "at risk": "#e69500", "lost": "#d62728", "cut": "#7f7f7f"}
OUTCOME_MARKS = {"resolved": "✓", "finished": "✓", "unresolved": "✗", "unfinished": "·"}


def outcome_of(run: Run) -> str:
    """``resolved`` / ``unresolved`` where a grader labelled the run, else ``finished`` / ``unfinished`` (the
    frontier's basis, ``workbench.analysis.frontier.success_of``)."""
    from workbench.analysis.frontier import success_of

    ok, basis = success_of(run)
    if basis == "resolved":
        return "resolved" if ok else "unresolved"
    return "finished" if ok else "unfinished"


def fate_of(run: Run, r: ReplayResult) -> str:
    """How the policy treats the run: kept, at risk or — for a run that succeeded — lost (else cut)."""
    if r.cut_turns > 0:
        return "lost" if outcome_of(run) in ("resolved", "finished") else "cut"
    return "at risk" if r.landing_started_at is not None else "kept"


def _label(run: Run) -> str:
    outcome = outcome_of(run)
    return f"{OUTCOME_MARKS[outcome]} {outcome} · {run.run_id} · {run.source} · {len(run.turns)} turns"


def _png(fig: plt.Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


class Explorer(w.VBox):
    """An ipywidgets panel over one corpus. Attributes a test (or a person) can drive programmatically:
    ``run``, ``grant``, ``context_length``, ``calibration``, ``rules`` (the controls), ``result`` (the current
    :class:`ReplayResult`), ``summary`` and ``decisions`` (HTML widgets) and ``chart`` (an Image widget)."""

    def __init__(self, runs: Iterable[Run], *, leaves: bool = True, policy: Policy | None = None) -> None:
        pool: Sequence[Run] = list(runs)
        if leaves:
            pool = [leaf for r in pool for leaf in r.leaves()]
        if not pool:
            raise ValueError("the explorer needs at least one run")
        self.runs: list[Run] = [r for r in pool if r.turns]
        if not self.runs:
            raise ValueError("none of the runs has a model call to replay")
        base = policy or Policy.named("current")
        self.run = w.Dropdown(
            options=[(_label(r), i) for i, r in enumerate(self.runs)],
            value=0,
            description="run",
            layout=w.Layout(width="640px"),
        )
        self.rules = w.Dropdown(options=[*RULE_SETS, RECORDED], value=base.rules, description="rules")
        lo, hi, step = GRANT_RANGE
        self.grant = w.IntSlider(
            value=min(max(base.grant, lo), hi),
            min=lo,
            max=hi,
            step=step,
            description="grant",
            continuous_update=False,
            readout_format=",d",
            style={"description_width": "initial"},
            layout=w.Layout(width="520px"),
        )
        self.context_length = w.Dropdown(
            options=list(CONTEXT_LENGTHS), value=base.context_length or NO_MANAGER, description="context"
        )
        self.calibration = w.FloatSlider(
            value=base.calibration or CALIBRATION_SEED,
            min=1.0,
            max=2.0,
            step=0.05,
            description="calibration",
            continuous_update=False,
            style={"description_width": "initial"},
        )
        self.summary = w.HTML()
        self.chart = w.Image(format="png", layout=w.Layout(max_width="100%"))
        self.decisions = w.HTML()
        self.result: ReplayResult | None = None
        self.error: str | None = None
        self._usd: dict[str, object] = {}  # run id -> cumulative USD per call (priced once per run)
        for control in (self.run, self.rules, self.grant, self.context_length, self.calibration):
            control.observe(self._changed, names="value")
        controls = w.VBox(
            [self.run, w.HBox([self.rules, self.context_length]), w.HBox([self.grant, self.calibration])]
        )
        super().__init__([controls, self.summary, self.chart, self.decisions])
        self.refresh()

    def __repr__(self) -> str:
        """The text saved beside the widget (what a reader without a live kernel sees): the selection and its
        replay as a small table, not the widget tree."""
        r = self.result
        rows: list[tuple[str, object]] = [
            ("run", self.current_run.run_id),
            ("rules", self.rules.value),
            ("grant", f"{self.grant.value:,}"),
            ("context length", self.context_length.value or "none (no manager)"),
            ("calibration", self.calibration.value),
        ]
        if r is not None:
            rows += [
                ("stop reason", r.stop_reason),
                ("stop turn", r.stop_turn),
                ("verdict", r.verdict),
                ("spent (cost meter)", f"{r.spent:,}"),
                ("raw tokens", f"{r.raw:,}"),
            ]
        elif self.error:
            rows.append(("error", self.error))
        width = max(len(k) for k, _ in rows)
        body = "\n".join(f"  {k:<{width}}  {v}" for k, v in rows)
        return f"Explorer over {len(self.runs)} runs\n{body}"

    # -- state -------------------------------------------------------------------------------------------------
    @property
    def current_run(self) -> Run:
        return self.runs[self.run.value]

    def select(self, run_id: str) -> None:
        """Show the run (or segment) with this id."""
        for i, r in enumerate(self.runs):
            if r.run_id == run_id:
                self.run.value = i
                return
        raise KeyError(f"no run {run_id!r} in this explorer")

    def policy(self) -> Policy:
        """The policy the controls describe, for the selected run."""
        run = self.current_run
        base = Policy.recorded(run) if self.rules.value == RECORDED else Policy.named(self.rules.value)
        over: dict[str, object] = {"grant": int(self.grant.value)}
        if self.context_length.value != NO_MANAGER:
            over.update(
                context_length=int(self.context_length.value), calibration=float(self.calibration.value)
            )
        return base.replace(**over)

    def _changed(self, _change: object) -> None:
        self.refresh()

    def refresh(self) -> None:
        """Replay the selected run under the controls' policy and redraw."""
        run = self.current_run
        try:
            policy = self.policy()
        except ValueError as exc:  # e.g. "recorded" for a run that recorded no policy
            self.error = str(exc)
            self.result = None
            self.summary.value = f"<b style='color:#b00'>{html.escape(str(exc))}</b>"
            self.decisions.value = ""
            return
        self.error = None
        self.result = replay(run, policy)
        self.summary.value = self._summary_html(self.result, run)
        fig = run_timeline(run, self.result)
        # the run's outcome in the chart itself: a coloured band along the top edge and its word in the title
        outcome = outcome_of(run)
        fig.patch.set_edgecolor(OUTCOME_COLOURS[outcome])
        fig.patch.set_linewidth(6)
        if fig.axes:
            ax = fig.axes[0]
            ax.set_title(
                f"{outcome} — {fate_of(run, self.result)} under {self.result.policy.label}",
                fontsize=9,
                color=OUTCOME_COLOURS[outcome],
                loc="left",
            )
        self.chart.value = _png(fig)
        frame = self.result.to_frame()
        self.decisions.value = (
            "<i>no decisions: the policy let the recording run as it was</i>"
            if frame.empty
            else frame.to_html(index=False, border=0, max_rows=40, na_rep="")
        )

    def _dollars(self, run: Run):  # -> RunLedger
        """The run's priced calls (genai-prices at each call's date, else the source's recorded cost)."""
        if run.run_id not in self._usd:
            from workbench.analysis.frontier import ledger

            self._usd[run.run_id] = ledger([run])
        return self._usd[run.run_id]

    def usd(self) -> tuple[float, float, float]:
        """(spent at the stop, cut, recorded) in USD for the current replay; NaN where a call has no price."""
        assert self.result is not None
        book = self._dollars(self.current_run)
        total = float(book.table["recorded_usd"].iloc[0])
        spent = book.usd_through(self.current_run.run_id, self.result.turns_replayed)
        return spent, total - spent, total

    def _summary_html(self, r: ReplayResult, run: Run) -> str:
        outcome = outcome_of(run)
        fate = fate_of(run, r)
        spent_usd, cut_usd, total = self.usd()

        def usd(x: float) -> str:
            return "— (no price for some call)" if x != x else f"${x:,.2f}"  # NaN: unpriced

        stop = (
            "recording ended first (censored: a lower bound)"
            if r.censored
            else f"{r.stop_reason} at turn {r.stop_turn}"
        )
        bits = [
            ("policy", r.policy.label),
            ("stop", stop),
            ("verdict", r.verdict or "—"),
            ("spent / raw at stop", f"{r.spent:,} / {r.raw:,} tokens"),
            ("spent at stop (USD)", f"{usd(spent_usd)} of {usd(total)} recorded; cut {usd(cut_usd)}"),
            ("cut", f"{r.cut_turns} turns, {r.cut_tokens:,} tokens, {r.cut_tool_calls} tool calls"),
            ("diverges at", "—" if r.diverges_at is None else f"turn {r.diverges_at}"),
        ]
        cells = "".join(
            f"<tr><th style='text-align:left;padding-right:1em'>{k}</th><td>{html.escape(str(v))}</td></tr>"
            for k, v in bits
        )
        badge = (
            f"<span style='background:{OUTCOME_COLOURS[outcome]};color:#fff;padding:1px 6px;border-radius:3px'>"
            f"{html.escape(outcome)}</span> "
            f"<span style='background:{FATE_COLOURS[fate]};color:#fff;padding:1px 6px;border-radius:3px'>"
            f"{html.escape(fate)} under this policy</span>"
        )
        return f"<div>{badge}</div><table>{cells}</table>"
