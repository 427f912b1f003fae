"""``workbench bills PATH...``: every run billed under each context length x grant x observation mask, the totals
per cell printed and ``--out`` the per-run rows (docs/counterfactual-bills.md); ``--fit`` prints the prompt-cache
model fitted per provider route instead (docs/cache-model.md, "Fit per provider route").
"""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.cli import errors
from workbench.cli.ablation import ablation_overrides, add_ablation_arguments
from workbench.format import printable_lines

MAX_MASKS = 20


def masks(text: str) -> tuple[int | None, ...]:
    """A comma list of masks (tool-result turns kept, a whole number >= 0); ``none`` means no masking."""
    return errors.optional_counts(text, errors.non_negative_int, "mask", "a whole number >= 0", MAX_MASKS)


def grants(text: str) -> tuple[int | None, ...]:
    """The sweep's grant range (``START:STOP:STEP``), or a comma list of grants where ``none`` means no grant
    binds."""
    parts = [p.strip().lower() for p in str(text).split(",") if p.strip()]
    keep_none = any(p in {"none", "off", "-"} for p in parts)
    rest = ",".join(p for p in parts if p not in {"none", "off", "-"})
    if ":" in rest and "," in rest:
        raise argparse.ArgumentTypeError(f"a range START:STOP:STEP or a comma list, not both; got {text!r}")
    found = errors.grant_range(rest) if rest else ()
    return ((None,) if keep_none else ()) + tuple(found)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "bills",
        help="what runs would have cost under context lengths, grants and observation masking",
        description="Bill every run under each context length x grant x observation mask, with the prompt "
        "cache modelled, and print the totals per cell (spend and spend saved, in tokens and USD).",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="trace files or folders")
    p.add_argument(
        "--context-lengths",
        type=errors.context_lengths,
        default=(None,),
        metavar="LIST",
        help="comma list of context lengths in tokens, 'none' for no manager (default: none)",
    )
    p.add_argument(
        "--grants",
        type=grants,
        default=(None,),
        metavar="RANGE",
        help="'none' (default: no grant binds) or START:STOP:STEP / a comma list of grants",
    )
    p.add_argument(
        "--masks",
        type=masks,
        default=(None,),
        metavar="LIST",
        help="comma list of observation masks (tool-result turns kept), 'none' for no masking (default: none)",
    )
    p.add_argument(
        "--block-masks",
        type=masks,
        default=(),
        metavar="LIST",
        help="cache-aware masks to bill beside the sliding ones: mask M moves every M turns, by M observations",
    )
    errors.add_rules(p)
    p.add_argument(
        "--ungoverned",
        action="store_true",
        help="bill every recorded call without replaying the governors (faster; the grant axis is ignored)",
    )
    p.add_argument(
        "--break-even",
        action="store_true",
        help="solve where the saving changes sign along the whole mask and window axes (bills a grid, then "
        "bisects; slower), as billed and with no cache",
    )
    p.add_argument("--out", type=Path, help="per-run rows: .csv or .parquet")
    p.add_argument(
        "--fit",
        action="store_true",
        help="print the prompt-cache model fitted per provider route (K-fold by run) beside the naive baselines",
    )
    p.add_argument("--json", action="store_true", help="with --fit: one JSON object per route per line")
    p.add_argument("--calls", type=Path, metavar="FILE.csv", help="with --fit: one row per call")
    add_ablation_arguments(p)
    p.set_defaults(func=run)


def _interval(d: dict | None, fmt: str = "{:,.0f}") -> str:
    if not d or d.get("value") is None:
        return "—"
    v = fmt.format(d["value"])
    if d.get("low") is not None and d.get("high") is None:
        return f"{v} [{fmt.format(d['low'])}-unbounded]"
    if d.get("low") is None or d.get("high") is None:
        return v
    return f"{v} [{fmt.format(d['low'])}-{fmt.format(d['high'])}]"


def _share(v: float | None) -> str:
    """A share of calls, or why there is none (the route's responses never reported a cache read)."""
    return "unknown (not reported)" if v is None else f"{v:.1%}"


def fit_table(objs: list[dict]) -> str:
    """The fit as a text table: one line per route."""
    import pandas as pd

    rows = []
    for o in objs:
        p = o["parameters"] or {}
        ttl = p.get("ttl_s") or {}
        rows.append(
            {
                "route": o["route"],
                "runs": o["runs"],
                "calls": o["calls"],
                "within 2%": _share(o["within_2pct"]),
                "within 10%": _share(o["within_10pct"]),
                "baseline": o["baseline"] or "—",
                "baseline 2%": _share(o["baseline_within_2pct"]),
                "baseline 10%": _share(o["baseline_within_10pct"]),
                "accounting": p.get("accounting", "—"),
                "block": _interval(p.get("block")),
                "min": _interval(p.get("min_tokens")),
                "reply read": "—" if not p else "yes" if p.get("reply_cached") else "no",
                "ttl s": _interval(ttl, "{:,.0f}")
                if ttl.get("value") is not None
                else f">= {p['ttl_lower_s']:,.0f}"
                if p.get("ttl_lower_s")
                else "—",
                "miss": _interval(p.get("miss"), "{:.1%}"),
            }
        )
    return pd.DataFrame(rows).to_string(index=False)


def _cell(row, governed: bool = False, label: str = "") -> str:
    """Whose bill a totals row is: the governed replay of ``label`` (with its grant) or every recorded call
    re-billed, under its window and mask, or under neither."""
    parts = []
    if governed and row.get("grant", "none") != "none":
        parts.append(f"grant {int(row['grant']):,}")
    if row["context_length"] != "none":
        parts.append(f"window {int(row['context_length']):,}")
    if row["mask"] != "none":
        block = row.get("mask_block", "none")
        parts.append(f"mask {row['mask']}" + (" in blocks" if block != "none" else ""))
    if not parts or (parts[0].startswith("grant") and len(parts) == 1):
        parts.append("no window, no mask")
    kind = f"governed replay ({label})" if governed else "every recorded call"
    return f"{kind}, {', '.join(parts)}"


def _plain(row) -> bool:
    """No window and no mask: the row changes no request."""
    return row["context_length"] == "none" and row["mask"] == "none"


def _read_price_words(row) -> str:
    """Where the sign flips along the cache-read price (a share of the input price), with its 90% interval over
    the draws, and on which side the policy saves."""
    import pandas as pd

    even = row.get("read_price_break_even")
    if even is None or pd.isna(even):
        return "; the saving does not depend on the cache-read price"
    lo, hi = row.get("read_price_break_even_low"), row.get("read_price_break_even_high")
    band = "" if lo is None or hi is None or pd.isna(lo) or pd.isna(hi) else f" [{lo:.2f}-{hi:.2f}]"
    rises = row.get("read_price_saving_rises")
    side = (
        ""
        if rises is None or pd.isna(rises)
        else " (saves above that, costs more below)"
        if rises
        else " (saves below that, costs more above)"
    )
    if 0 < even <= 1:
        return f"; break-even at a cache-read price of {even:.2f}x input{band}{side}"
    return f"; the same sign at any cache-read price up to the input price (break-even {even:.2f}x{band})"


def uncertainty_lines(totals, *, governed: bool = False, label: str = "") -> str:
    """Per cell: the bill with its 90% interval, whether the saving's sign is robust, the cache-read price at
    which it flips (with its interval) and the saving with no cache; then where the sign flips along the masks
    and windows swept. Each row is named for whose bill it is (:func:`_cell`)."""
    import pandas as pd

    from workbench.replay.bill_interval import sign_words
    from workbench.replay.bill_sweep import break_even

    lines = [
        "Bills with their 90% interval (median [5%-95%] of the fitted cache model's draws: block and miss share "
        "resampled, misses drawn call by call; 'no-miss' is the model's point bill):"
    ]
    for _, r in totals.iterrows():
        name = _cell(r, governed, label)
        if pd.isna(r.get("cf_usd")) or pd.isna(r.get("cf_usd_low")):
            lines.append(f"  {name}: not priced in USD")
            continue
        if _plain(r):
            what = (
                "the recorded calls up to where the governors stop: no request changes, so no interval"
                if governed
                else "no request changes: the recorded bill, no interval"
            )
            lines.append(f"  {name}: ${r['cf_usd']:,.2f} ({what}; recorded ${r['recorded_usd']:,.2f})")
            continue
        sign = sign_words(r["saved_usd_share_low"], r["saved_usd_share_high"])
        unc = r["saved_uncached_share"]
        uncached = f"; billed with no cache it saves {unc:+.1%}" if pd.notna(unc) else ""
        lines.append(
            f"  {name}: ${r['cf_usd_median']:,.2f} [${r['cf_usd_low']:,.2f}-${r['cf_usd_high']:,.2f}] "
            f"(no-miss ${r['cf_usd']:,.2f}) against ${r['recorded_usd']:,.2f} recorded; {sign}"
            f"{_read_price_words(r)}{uncached}"
        )
    be = break_even(totals)
    for col, what in (("mask", "mask size"), ("context_length", "context length")):
        sliding = totals[totals["mask_block"] == "none"] if "mask_block" in totals else totals
        other = "context_length" if col == "mask" else "mask"
        swept = sorted({x for x in sliding[sliding[other] == "none"][col] if x != "none"})
        if len(swept) < 2:
            continue
        for key, how in ((col, "as billed"), (f"uncached_{col}", "billed with no cache")):
            v = be.get(key)
            lines.append(
                f"Break-even {what} over the sweep ({how}): "
                + (
                    f"none between {swept[0]:,} and {swept[-1]:,} (--break-even solves over the whole axis)"
                    if v is None
                    else f"the saving changes sign at {v:,.1f}"
                )
            )
    return "\n".join(lines)


def run_fit(args: argparse.Namespace) -> int:
    import json

    from workbench.analysis.route_fit import fit_routes
    from workbench.cli._format import check_table_out, write_table

    if args.calls is not None:
        check_table_out(args.calls, args.paths, (".csv",), flag="--calls")
    from workbench.cli._load import load_runs  # the readers: not for --help

    corpus = load_runs(args.paths, "bills", "runs (a session whole)")
    fit = fit_routes(corpus.runs)
    if fit.calls.empty:
        raise errors.DataError("bills", "no run with recorded usage to fit")
    objs = fit.objects()
    if args.json:
        for o in objs:
            print(json.dumps(o))
    else:
        print(fit_table(objs))
    if args.calls is not None:
        write_table(fit.call_rows(), args.calls)  # a .csv: check_table_out allows no other
        errors.say("bills", f"calls: {args.calls}")
    return 1 if corpus.problems else 0


def render_totals(totals, policy_label: str, *, governed: bool) -> str:  # totals: grid_totals' frame
    """The totals as text: first the recorded bill exactly (what the recording cost), then one row per cell,
    labelled with whose bill it is (the governed replay, or every recorded call re-billed), in ``$1,234.56``."""
    from workbench.cli._format import table
    from workbench.format import usd

    columns = ("bill", "context", "grant", "mask", "meter tokens", "USD", "saved tokens", "saved USD",
               "saved")  # fmt: skip
    first = totals.iloc[0]
    recorded = ("recorded (as the runs were billed)", "—", "—", "—", int(first["recorded_spent"]))
    rows = [dict(zip(columns, (*recorded, usd(first["recorded_usd"]), 0, usd(0.0), "—"), strict=True))]
    kind = f"{policy_label}, governed" if governed else "ungoverned (every recorded call)"
    for r in totals.to_dict("records"):
        share = r["saved_usd_share"]
        cell = (kind, r["context_length"], r["grant"], r["mask"], int(r["cf_spent"]), usd(r["cf_usd"]))
        saved = (int(r["saved_spent"]), usd(r["saved_usd"]), "—" if share != share else f"{share:+.1%}")
        rows.append(dict(zip(columns, (*cell, *saved), strict=True)))
    return table(rows, tuple(rows[0]), max_width=60)


def run(args: argparse.Namespace) -> int:
    from workbench.cli._format import check_table_out, write_table
    from workbench.replay.bill_sweep import bill_grid, grid_totals

    if args.fit:
        return run_fit(args)
    if args.json or args.calls is not None:
        raise errors.UsageError("--json/--calls", "go with --fit")

    if args.out is not None:
        check_table_out(args.out, args.paths)
    overrides = ablation_overrides(args, args.rules)
    overrides.pop("grant", None)  # the grant is the --grants axis
    overrides.pop("context_length", None)  # and the context length the --context-lengths one
    from workbench.cli._load import load_runs  # the readers: not for --help

    corpus = load_runs(args.paths, "bills", "runs (a session whole)")
    if args.out is not None:
        check_table_out(args.out, corpus.files)
    frame = bill_grid(
        corpus.runs,
        context_lengths=args.context_lengths,
        grants=args.grants,
        masks=args.masks,
        rules=args.rules,
        governed=not args.ungoverned,
        block_masks=tuple(m for m in args.block_masks if m),
        **overrides,
    )
    if frame.empty:
        raise errors.DataError("bills", "no run with recorded usage to bill")
    totals = grid_totals(frame)
    from workbench.govern.policy import Policy

    label = Policy.named(args.rules, **overrides).label.replace(" g=220,000", "")
    print(render_totals(totals, label, governed=not args.ungoverned))
    print()
    print(printable_lines(uncertainty_lines(totals, governed=not args.ungoverned, label=label).splitlines()))
    if args.break_even:
        from workbench.replay.bill_break_even import solve

        for axis in ("mask", "context_length"):
            for found in solve(
                corpus.runs, axis, governed=not args.ungoverned, rules=args.rules, **overrides
            ):
                print(printable_lines([found.words()]))
    frame = frame.drop(columns=["cf_usd_draws", "cf_cached_in_draws", "cf_rest_draws"], errors="ignore")
    if args.out is not None:
        write_table(frame, args.out)
        print(f"rows: {args.out}")
    return 1 if corpus.problems else 0
