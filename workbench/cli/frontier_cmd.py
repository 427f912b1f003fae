"""``workbench frontier PATH... [--rules ...] [--grants START:STOP:STEP] [--context-lengths ...] [--by ...] [--json]``

Which grant keeps the runs that succeed, and what it saves. Every run is replayed under every (rule set, grant,
context length); per group of runs (``--by source|agent|model|all``) and policy it counts the resolved runs kept,
at risk and lost (Wilson 95% intervals), the unresolved runs cut, and the spend in tokens and dollars. Unlabelled
runs count as succeeded when their recording finished on its own (the ``basis`` column says which).

Invariants the analyst sets pick the recommended grant per group — the smallest swept grant where all hold:
``--keep-resolved 0.95`` (the default), ``--keep-bound lower``, ``--max-lost N``, ``--max-raw N``,
``--min-saved-usd X``, ``--min-saved-tokens N``, or ``--invariants FILE.toml`` (an ``[invariants]`` table of the same
names); ``--invariants seed`` picks with the seed's two invariants over its synthetic runaway instead.

With ``--json``: one JSON object per line per (group, policy) with every frontier column (docs/frontier.md), then
one ``{"recommendation": ...}`` line per group.

An agent's own limits: ``--rules mini-swe-agent --cost-limits 0.25:3:0.25`` (and/or ``--step-limits 50:250:50``)
sweeps that agent's dollar and step limits instead of a grant (``workbench.cli.limit_frontier_cmd``): the same
columns, ``cost_limit``/``step_limit`` in place of ``grant``, the recommendation in the agent's own unit.
"""

from __future__ import annotations

import argparse
import json

from workbench.cli import errors, limit_frontier_cmd
from workbench.cli._sources import add_paths
from workbench.cli.ablation import ablation_overrides, add_ablation_arguments
from workbench.cli.invariants import add_invariant_arguments, invariants_from_args
from workbench.format import printable

TABLE_COLUMNS = ("grant", "resolved", "resolved_kept", "kept %", "95% CI", "resolved_at_risk",
                 "resolved_lost", "unresolved_cut", "stopped_inferred", "unjudged", "spend_saved_tokens",
                 "spend_saved_usd", "lost by")  # fmt: skip


def _confidence(text: str) -> float:
    value = errors.positive_float(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text!r}")
    return value


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "frontier",
        help="which grant keeps the runs that succeed, and what it saves",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_paths(p)
    errors.add_rules(p, many=True)
    errors.add_grants(p, "grants", default="default 100000:600000:10000")
    p.add_argument(
        "--context-lengths",
        type=errors.context_lengths,
        default=(None,),
        help="comma list of context lengths; 'none' = no context manager (default: none)",
    )
    p.add_argument(
        "--by", default="source", choices=("source", "agent", "model", "all"), help="group runs by"
    )
    p.add_argument("--confidence", type=_confidence, default=0.95, help="interval level (default 0.95)")
    add_invariant_arguments(p)
    limit_frontier_cmd.add_arguments(p)
    add_ablation_arguments(p)
    p.add_argument(
        "--explain",
        type=errors.positive_int,
        metavar="GRANT",
        default=None,
        help="list each resolved run lost at GRANT: its stop turn and rule, the evidence, and what the recording "
        "did after the cut",
    )
    p.add_argument(
        "--compare",
        nargs=2,
        metavar="POLICY",
        default=None,
        help='two policies side by side, each "RULES [--without ...] [--set FIELD=VALUE]", e.g. '
        '"current" "current --without no-progress": kept, lost, $ saved, and the runs whose fate differs',
    )
    p.add_argument(
        "--efficiency",
        action="store_true",
        help="also SWE-Effi's EuTB/EuCB per group, recorded and under every policy, and the expensive failures "
        "(text output always shows the recorded and recommended rows)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per (group, policy) per line")
    p.add_argument("--progress", action="store_true", help="show a progress bar")
    p.set_defaults(func=run)


def _lost_words(m: dict[str, int]) -> str:
    return ", ".join(f"{n} {c}" for c, n in m.items()) or "—"


def run(args: argparse.Namespace) -> int:
    from workbench.analysis.frontier import default_grants, frontier, replayable_leaves
    from workbench.analysis.recommendation import recommendations

    if limit_frontier_cmd.wanted(args):
        return limit_frontier_cmd.run(args)
    agents = [r for r in args.rules if r in limit_frontier_cmd.LIMITED_RULES and r != "openhands"]
    if agents:
        raise errors.UsageError(
            "--rules",
            f"{', '.join(agents)} has no token grant: sweep its own limits with --cost-limits or --step-limits",
        )
    grants = list(args.grants) if args.grants else list(default_grants())
    rules = list(args.rules)
    invariants = invariants_from_args(args)
    overrides = ablation_overrides(args, rules)
    compare = [parse_compare(text) for text in args.compare] if args.compare else None
    from workbench.cli._load import load_runs  # the readers: not for --help
    from workbench.scale.executor import cores

    corpus = load_runs(args.paths, "frontier", "leaves (sessions split at each user prompt)")
    leaves = replayable_leaves(corpus)

    def one(rules_: list[str], over: dict) -> object:
        try:
            return frontier(
                leaves,
                rules=rules_,
                grants=grants,
                context_lengths=list(args.context_lengths),
                by=args.by,
                confidence=args.confidence,
                progress=args.progress,
                workers=cores(),  # local processes where enough leaves make them pay (scale.sweep)
                overrides=over,
            )
        except ValueError as exc:
            raise errors.DataError(str(exc)) from exc

    if compare is not None:
        return print_compare(
            [(label, one([r], over)) for label, r, over in compare], invariants, leaves, args.json, corpus
        )
    fr = one(rules, overrides)
    recs = recommendations(fr, invariants, leaves)
    if args.explain is not None:
        return print_explain(fr, args.explain, leaves, args.json, corpus)
    from workbench.cli._format import print_jsonl, table, with_kept

    if args.json:
        print_jsonl(fr.records(), recs)
        if args.efficiency:
            print_efficiency(fr, recs, as_json=True, every=True)
        return 1 if corpus.problems else 0
    from workbench.format import usd

    print(f"{len(fr.runs)} runs; shares carry the {fr.interval}.")
    for n in fr.notes:
        print(printable(f"note: {n}"))
    for p in recs:
        ctx = "no context manager" if p.context_length is None else f"context length {p.context_length:,}"
        curve = fr.curve(p.group, p.rules, p.context_length)
        word = "finished" if curve["basis"].iloc[0] == "finished" else "resolved"
        print()
        print(
            printable(f"== {p.group} — rules {p.rules}, {ctx}; success = {word} ({curve['basis'].iloc[0]})")
        )
        print(printable(p.headline))
        print(printable(f"  why: {p.why}"))
        if p.found:
            print(printable("  " + fr.point(p.grant, p.group, p.rules, p.context_length).words))
        rows = [
            {**rec, "spend_saved_usd": usd(rec["spend_saved_usd"]), "lost by": _lost_words(rec["lost_by"])}
            for rec in map(with_kept, curve.to_dict("records"))
        ]
        print(table(rows, TABLE_COLUMNS))
    print_efficiency(fr, recs, as_json=False, every=args.efficiency)
    return 1 if corpus.problems else 0


def print_efficiency(fr, recs, *, as_json: bool, every: bool) -> None:
    """SWE-Effi's EuTB/EuCB per group (recorded; under the recommended grant, or every policy with ``every``) and
    the expensive failures at the recommended grant."""
    from workbench.analysis.efficiency import RECORDED, TOKEN_CAP, USD_CAP, efficiency, expensive_failures
    from workbench.analysis.frontier import _plain  # numpy scalars and NaN as JSON values
    from workbench.cli._format import table
    from workbench.format import usd

    eff = efficiency(fr)
    first_rules = str(fr.table["rules"].iloc[0])
    head = next((p for p in recs if p.group == fr.groups[-1] and p.rules == first_rules), None)
    grant = head.grant if head is not None else None
    fails = expensive_failures(fr, grant, fr.groups[-1], first_rules)
    if as_json:
        for rec in eff.to_dict("records"):
            print(json.dumps({"efficiency": {k: _plain(v) for k, v in rec.items()}}))
        for rec in fails.to_dict("records"):
            print(
                json.dumps({"expensive_failure": {"grant": grant, **{k: _plain(v) for k, v in rec.items()}}})
            )
        return
    if not every:
        keep = eff["policy"] == RECORDED
        for p in recs:
            if p.grant is not None:
                keep |= (eff["group"] == p.group) & (eff["rules"] == p.rules) & (eff["grant"] == p.grant)
        eff = eff[keep]
    print()
    print(
        f"Efficiency (SWE-Effi, Fan et al. 2025, arXiv:2509.09853): area under the resolve rate against tokens "
        f"up to {TOKEN_CAP:,} per run (EuTB) and dollars up to {usd(USD_CAP)} (EuCB), normalised to the cap"
    )
    rows = [
        {
            **r,
            "resolve rate": f"{r['resolve_rate']:.1%}",
            "EuTB": f"{r['eutb']:.1%}",
            "EuCB": "—" if r["eucb"] != r["eucb"] else f"{r['eucb']:.1%}",
        }
        for r in eff.to_dict("records")
    ]
    print(table(rows, ("group", "policy", "runs", "resolved", "resolve rate", "EuTB", "EuCB", "usd_runs")))
    if len(fails):
        at = f"at the recommended {grant:,}" if grant else "(no grant recommended: nothing saved)"
        print()
        print(f"Expensive failures ({fr.groups[-1]}): unresolved runs by recorded spend; saved {at}")
        frows = [
            {
                "run": r["run_id"],
                "recorded": usd(r["recorded_usd"]),
                "meter tokens": int(r["recorded_tokens"]),
                "saved": usd(r["saved_usd"]),
                "saved tokens": r["saved_tokens"],
                "cut by": r["cut_by"] or "—",
            }
            for r in fails.to_dict("records")
        ]
        print(table(frows, tuple(frows[0])))


def parse_compare(text: str) -> tuple[str, str, dict]:
    """One ``--compare`` policy: ``RULES [--without ...] [--set FIELD=VALUE ...]`` → (label, rules, overrides)."""
    import shlex

    from workbench.govern.policy import RULE_SETS as sets

    parts = shlex.split(text)
    if not parts or parts[0] not in sets:
        raise errors.UsageError(
            f"--compare {text!r}", f"must start with a rule set, {errors.one_of(sorted(sets))}"
        )
    sub = argparse.ArgumentParser(prog=f"--compare {text!r}", add_help=False, exit_on_error=False)
    add_ablation_arguments(sub)
    try:
        ns, rest = sub.parse_known_args(parts[1:])
    except (argparse.ArgumentError, argparse.ArgumentTypeError) as exc:
        raise errors.UsageError(f"--compare {text!r}", str(exc)) from exc
    if rest:
        raise errors.UsageError(
            f"--compare {text!r}", f"unknown option(s) {' '.join(rest)}; takes --without, --set"
        )
    return text, parts[0], ablation_overrides(ns, parts[0])


def print_explain(fr, grant: int, leaves, as_json: bool, corpus) -> int:
    """``--explain GRANT``: each resolved run lost at that grant, per group and rule set, with its evidence."""
    from workbench.analysis.losses import explain

    if grant not in set(int(g) for g in fr.table["grant"]):
        raise errors.UsageError(f"--explain {grant:,}", "is not on the swept grid; add it to --grants")
    keys = fr.table[["group", "rules", "context_length"]].drop_duplicates().to_dict("records")
    for k in keys:
        ctx = (
            None
            if k["context_length"] is None or k["context_length"] != k["context_length"]
            else int(k["context_length"])
        )
        lost = explain(fr.lost(grant, k["group"], k["rules"], ctx), leaves, fr.overrides)
        if as_json:
            for loss in lost:
                print(
                    json.dumps({"grant": grant, "rules": k["rules"], "context_length": ctx, **loss.to_dict()})
                )
            continue
        point = fr.point(grant, k["group"], k["rules"], ctx)
        print(
            f"== {k['group']} — rules {k['rules']}, grant {grant:,}: {point['resolved_lost']} resolved run(s) lost"
            + (f" ({_lost_words(point['lost_by'])})" if point["resolved_lost"] else "")
        )
        for loss in lost:
            print(loss.words)
    return 1 if corpus.problems else 0


def print_compare(frontiers, invariants, leaves, as_json: bool, corpus) -> int:
    """``--compare A B``: per grant, kept / lost / $ saved under each policy, and the runs whose fate differs."""
    from workbench.analysis.recommendation import recommendations
    from workbench.cli._format import table
    from workbench.format import usd

    (la, fa), (lb, fb) = frontiers[0], frontiers[1]
    recs = {label: recommendations(fr, invariants, leaves) for label, fr in frontiers}
    ia, ib = (f.rows.set_index(["run_id", "grant"]) for f in (fa, fb))
    ra, rb, ca, cb = ia["fate"], ib["fate"], ia["cause"], ib["cause"]
    differ = ra.index[(ra != rb.reindex(ra.index)).to_numpy()]
    by_run: dict[str, list[int]] = {}
    for run_id, grant in differ:
        by_run.setdefault(run_id, []).append(int(grant))
    success = fa.runs.set_index("run_id")["success"]
    if as_json:
        for label, fr in frontiers:
            for rec in fr.records():
                print(json.dumps({"policy": label, **rec}))
            for p in recs[label]:
                print(json.dumps({"policy": label, "recommendation": p.to_dict()}))
        for run_id, gs in by_run.items():
            g0 = gs[0]
            print(
                json.dumps(
                    {
                        "differs": run_id,
                        "resolved": bool(success[run_id]),
                        "grants": gs,
                        la: {"fate": ra[(run_id, g0)], "cause": ca[(run_id, g0)]},
                        lb: {"fate": rb[(run_id, g0)], "cause": cb[(run_id, g0)]},
                    }
                )
            )
        return 1 if corpus.problems else 0
    print(f"A = {la}\nB = {lb}")
    for label, _ in frontiers:
        for p in recs[label]:
            print(f"{'A' if label == la else 'B'} {p.group}: {p.headline}")
    # the runs' fates are per run: one table, for the whole corpus (the last group: "all runs" when several)
    for group in list(fa.groups)[-1:]:
        ta, tb = fa.curve(group), fb.curve(group)
        rows = []
        for a, b in zip(ta.to_dict("records"), tb.to_dict("records"), strict=True):
            n = sum(1 for gs in by_run.values() if int(a["grant"]) in gs)
            rows.append(
                {
                    "grant": a["grant"],
                    "A kept": a["resolved_kept"],
                    "B kept": b["resolved_kept"],
                    "A lost": a["resolved_lost"],
                    "B lost": b["resolved_lost"],
                    "A cut": a["unresolved_cut"],
                    "B cut": b["unresolved_cut"],
                    "A saved": usd(a["spend_saved_usd"]),
                    "B saved": usd(b["spend_saved_usd"]),
                    "runs differing": n,
                }
            )
        print(f"\n== {group}")
        print(table(rows, tuple(rows[0])))
    print(f"\nruns whose fate differs ({len(by_run)}):")
    for run_id, gs in sorted(by_run.items()):
        g0 = gs[0]
        kind = "resolved" if success[run_id] else "unresolved"
        span = f"{gs[0]:,}" if len(gs) == 1 else f"{gs[0]:,} to {gs[-1]:,} ({len(gs)} grants)"
        print(
            f"  {run_id} ({kind}) at {span}: A {ra[(run_id, g0)]}"
            + (f" by {ca[(run_id, g0)]}" if ca[(run_id, g0)] else "")
            + f" / B {rb[(run_id, g0)]}"
            + (f" by {cb[(run_id, g0)]}" if cb[(run_id, g0)] else "")
        )
    return 1 if corpus.problems else 0
