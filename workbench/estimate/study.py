"""The estimator study: how often each strategy (``adr``, ``fitted``, ``anchored``, ``exact``) under-counts (an
overflow) or over-counts (premature pruning), before and after ADR-107's calibration; docs/estimator.md.

    study(runs, strategies=STRATEGIES, seed=CALIBRATION_SEED) -> EstimatorStudy  # .to_frame(), .classes,
                                                                                # .calibration_bound()
"""

from __future__ import annotations

import html
from array import array
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from workbench.estimate.constants import CALIBRATION_SEED, STRATEGIES
from workbench.estimate.estimator import Estimator
from workbench.estimate.fit import (
    FitRows,
    adr_tokens,
    first_call_residual,
    fit_family,
    group_of,
    unseen_prefix,
)
from workbench.estimate.requests import RequestFeatures, family_of, features
from workbench.estimate.tokenizers import counter_for_model
from workbench.trace.fingerprint import fingerprint
from workbench.trace.schema import Run

# Workbench choice: the ``fitted`` strategy is scored leave-one-run-out up to this many runs per tokenizer family
# and K-fold beyond (K = this): every fold is one robust fit over the other runs, so the study stays linear in
# the corpus (leave-one-out over n runs is n fits of n runs each).
MAX_FOLDS = 20


def calibrate(estimate: np.ndarray, prompt: np.ndarray, seed: float) -> np.ndarray:
    """ADR-107's only-growing factor applied call by call (the factor of call t uses calls before t)."""
    out = np.empty_like(estimate)
    factor = seed
    for t in range(len(estimate)):
        out[t] = estimate[t] * factor
        if not np.isnan(prompt[t]) and estimate[t] > 0:
            factor = max(factor, prompt[t] / estimate[t])
    return out


def anchored(f: RequestFeatures, adr: Estimator, fallback: np.ndarray, scale: float) -> np.ndarray:
    """Last reported prompt + completion, plus the (scaled) ADR estimate of what followed the reply — the
    manager's anchored pricing; without a reported completion, last prompt + estimate of everything appended.
    ``fallback`` where there is no anchor (first call, or a request the source rewrote)."""
    out = fallback.copy()
    if len(f) < 2:
        return out
    # every turn at once, each element in the order the turn-by-turn definition sums it (tests/estimate/test_anchored.py)
    prompt, completion, delta = f.prompt[:-1], f.completion[:-1], f.counts[1:] - f.counts[:-1]
    bare = prompt + scale * adr_tokens(delta, adr)
    after_reply = prompt + completion + scale * adr_tokens(delta - f.reply[1:], adr)
    no_reply = np.isnan(completion) | ~f.reply[1:].any(axis=1)
    anchor = np.asarray(f.extends[1:], dtype=bool) & ~np.isnan(prompt)
    out[1:] = np.where(anchor, np.where(no_reply, bare, after_reply), out[1:])
    return out


def loo_medians(values: dict[str, float], content: Mapping[str, Hashable] | None = None) -> dict[str, float]:
    """For each key, the median of every *other* key's value — leave-one-out, in O(n log n) from one sorted
    array (removing one element from a sorted array moves the middle by at most one place). Equal, bit for
    bit, to ``np.median`` of the others; a key with no others is absent.

    ``content``: per key, the distinct run it is a copy of (``workbench.trace.fingerprint``). A run's copies are not
    other runs: every key of the same content is left out with it (leave-one-*content*-out), so a run's copies
    never set its prefix. Copies have equal values, so they are one block of the sorted array, removed at once."""
    n = len(values)
    if n < 2:
        return {}
    ordered = np.sort(np.fromiter(values.values(), dtype=float, count=n))
    times: Mapping[Hashable, int] = Counter(content[key] for key in values) if content is not None else {}
    out = {}
    for key, v in values.items():
        c = times.get(content[key], 1) if content is not None else 1
        m = n - c  # how many remain once the key and its copies are left out
        if m < 1:
            continue
        k = int(np.searchsorted(ordered, v))  # any copy of an equal value leaves the same others

        def kept(
            i: int, k: int = k, c: int = c
        ) -> float:  # i-th smallest once c values from the k-th are out
            return float(ordered[i if i < k else i + c])

        if c > 1 and not bool((ordered[k : k + c] == v).all()):
            # copies whose values differ (not copies after all): the others, counted directly
            others = [w for other, w in values.items() if content[other] != content[key]]  # type: ignore[index]
            out[key] = float(np.median(others))
        elif m % 2:
            out[key] = kept(m // 2)
        else:
            out[key] = float(np.mean([kept(m // 2 - 1), kept(m // 2)]))
    return out


def _loo_median(medians: dict[str, float], values: dict[str, float], run_id: str) -> tuple[float, bool]:
    """The unseen prefix for ``run_id``: the median first-call residual of the other runs of its group (never
    below zero: see :func:`~workbench.estimate.fit.unseen_prefix`), and whether it had to be its own."""
    if run_id in medians:
        return unseen_prefix(medians[run_id]), False
    return unseen_prefix(float(values.get(run_id, 0.0))), True


def folds_of(sets: Sequence[RequestFeatures], origin: Sequence[int] | None = None) -> dict[str, int]:
    """Each run's fold for the ``fitted`` strategy's cross-validation: leave-one-run-out up to
    ``MAX_FOLDS`` distinct runs, K-fold with ``K = MAX_FOLDS`` beyond. ``origin``: per set, its distinct
    content (``workbench.trace.fingerprint``; default: its ``run_id``). Distinct contents, in the order of
    their first ``run_id``, are dealt round the folds, so the copies of a run share its fold and a fit never
    scores a copy of a run it saw."""
    keys: list[Any] = list(origin) if origin is not None else [f.run.run_id for f in sets]
    first: dict[Any, str] = {}
    for f, k in zip(sets, keys, strict=True):
        if k not in first or f.run.run_id < first[k]:
            first[k] = f.run.run_id
    order = sorted(first, key=lambda k: first[k])
    n = max(1, min(len(order), MAX_FOLDS))
    fold_of = {k: i % n for i, k in enumerate(order)}
    return {f.run.run_id: fold_of[k] for f, k in zip(sets, keys, strict=True)}


def _ratios(r: pd.Series, prefix: str = "") -> dict[str, float]:
    """Reported / estimated prompt tokens: the under-count rates (above 1, above 1.05) and the quantiles."""
    rates = {"under_rate": (r > 1).mean(), "under5_rate": (r > 1.05).mean()}
    quantiles = {"ratio_p50": r.quantile(0.5), "ratio_p90": r.quantile(0.9), "ratio_max": r.max()}
    return {prefix + k: float(v) for k, v in {**rates, **quantiles}.items()}


@dataclass(frozen=True)
class EstimatorStudy:
    """Per-call estimates (``turns``), per-class comparison (``classes``), fits and prefixes, and notes."""

    turns: pd.DataFrame
    classes: pd.DataFrame
    fits: pd.DataFrame
    prefixes: pd.DataFrame
    notes: tuple[str, ...] = field(default_factory=tuple)
    seed: float = CALIBRATION_SEED

    def to_frame(self) -> pd.DataFrame:
        """Per source, model and strategy: calls, under-count rate and actual/estimate quantiles, raw and
        calibrated; ``over_mean`` is the mean over-count where it over-counts (the cost: early pruning)."""
        if self.turns.empty:
            return pd.DataFrame()
        rows = []
        for (source, model, strategy), g in self.turns.groupby(["source", "model", "strategy"], sort=True):
            over = g["estimate"] / g["prompt"] - 1
            raw, cal = _ratios(g["prompt"] / g["estimate"]), _ratios(g["prompt"] / g["calibrated"], "cal_")
            mean_over = float(over[over > 0].mean()) if (over > 0).any() else 0.0
            head = {"source": source, "model": model, "strategy": strategy, "runs": g["run_id"].nunique()}
            rows.append({**head, "calls": len(g), **raw, "over_mean": mean_over, **cal})
        return pd.DataFrame(rows)

    def calibration_bound(self, strategy: str = "adr") -> pd.DataFrame:
        """Per source: calls after a run's first usage, and how many the calibrated estimate under-counted by
        more than the growth the last turn added (``prompt - calibrated > max(0, prompt - previous prompt)``);
        ``at_rewrite`` counts those that fall on a request the source rewrote (a compaction)."""
        if self.turns.empty:
            return pd.DataFrame(
                columns=["source", "strategy", "runs", "calls", "violations", "rate", "at_rewrite"]
            )
        g = self.turns[(self.turns["strategy"] == strategy) & self.turns["after_first"]]
        rows = []
        for source, s in g.groupby("source", sort=True):
            v = s["bound_violation"]
            rows.append(
                {
                    "source": source,
                    "strategy": strategy,
                    "runs": s["run_id"].nunique(),
                    "calls": len(s),
                    "violations": int(v.sum()),
                    "rate": float(v.mean()) if len(s) else 0.0,
                    "at_rewrite": int((v & ~s["extends"]).sum()),
                }
            )
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data: missing values are ``None``."""

        def records(df: pd.DataFrame) -> list[dict[str, Any]]:
            return df.astype(object).where(df.notna(), None).to_dict(orient="records")

        return {
            "seed": self.seed,
            "notes": list(self.notes),
            "summary": records(self.to_frame()),
            "calibration_bound": {s: records(self.calibration_bound(s)) for s in STRATEGIES},
            "classes": records(self.classes),
            "fits": records(self.fits),
            "prefixes": records(self.prefixes),
        }

    def _repr_html_(self) -> str:
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
        summary = self.to_frame().to_html(index=False, float_format=lambda x: f"{x:.3f}")
        return (
            f"<h4>Estimator study ({self.turns['run_id'].nunique() if not self.turns.empty else 0} runs)</h4>"
            f"<ul>{notes}</ul>{summary}<h5>Fitted families</h5>"
            f"{self.fits.to_html(index=False, float_format=lambda x: f'{x:.3f}')}"
        )

    def __repr__(self) -> str:
        return f"EstimatorStudy(calls={len(self.turns)}, notes={len(self.notes)})"


def study(
    runs: Iterable[Run],
    strategies: Sequence[str] = STRATEGIES,
    seed: float = CALIBRATION_SEED,
    *,
    tables: bool = True,
) -> EstimatorStudy:
    """The study over ``runs``; a run's copies (the same content: ``workbench.trace.fingerprint.fingerprint``) are
    left out with it wherever a run is held out. ``tables=False``: the
    per-call ``turns`` only — the whole-corpus fits and the per-class table are left empty (they are a robust fit
    over every call: a caller that reads the calls alone need not pay for them)."""
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        raise ValueError(f"unknown strategy {unknown[0]!r}; choose from {', '.join(STRATEGIES)}")
    notes: list[str] = []
    sets: list[RequestFeatures] = []
    runs = list(runs)
    kept = [run for run in runs if run.role != "compaction"]
    skipped_compaction = len(runs) - len(kept)
    contents: dict[bytes, int] = {}
    origin: list[int] = []  # per set, its content: a run and its copies are held out together
    for run in kept:
        models = {t.model or run.model for t in run.turns}
        counter = counter_for_model(models.pop()) if len(models) == 1 else None
        f = features(run, counter if "exact" in strategies else None)
        if f.comparable.any():
            sets.append(f)
            origin.append(contents.setdefault(fingerprint(run), len(contents)))
    if skipped_compaction:
        notes.append(
            f"{skipped_compaction} compaction call(s) left out: the file records the summary request, not the "
            "conversation the call re-sent"
        )
    adr = Estimator()
    prefix_adr: dict[str, dict[str, float]] = defaultdict(dict)
    for f in sets:
        r = first_call_residual(f, adr)
        if r is not None:
            prefix_adr[group_of(f)][f.run.run_id] = r

    prefix_exact: dict[str, dict[str, float]] = defaultdict(dict)
    for f in sets:
        ok = np.flatnonzero(f.comparable)
        if f.exact is not None and len(ok):
            prefix_exact[group_of(f)][f.run.run_id] = float(f.prompt[ok[0]] - _exact_tokens(f, adr)[ok[0]])

    # leave-one-content-out: a run's copies never set its prefix
    content = {f.run.run_id: k for f, k in zip(sets, origin, strict=True)}
    loo_adr = {g: loo_medians(v, content) for g, v in prefix_adr.items()}
    loo_exact = {g: loo_medians(v, content) for g, v in prefix_exact.items()}

    by_family: dict[str, list[RequestFeatures]] = defaultdict(list)
    family_origin: dict[str, list[int]] = defaultdict(list)
    for f, k in zip(sets, origin, strict=True):
        fam = family_of(f.run.model or next((m for m in f.models if m), None))
        by_family[fam].append(f)
        family_origin[fam].append(k)
    fitting = tables or "fitted" in strategies  # the fitted strategy's fallback for a family with one fold
    read = {fam: FitRows.of(fs, Estimator()) for fam, fs in by_family.items()} if fitting else {}
    full_fits = {fam: fit_family(fam, fs, rows=read[fam]) for fam, fs in by_family.items()} if fitting else {}

    frames: list[dict[str, np.ndarray]] = []
    prefix_rows: list[dict[str, Any]] = []
    exact_missing: set[str] = set()
    fold_notes: list[str] = []
    for fam, fs in by_family.items():
        fold = folds_of(fs, family_origin[fam])
        fold_fits: dict[int, Any] = {}
        contents = len(set(family_origin[fam]))
        if "fitted" in strategies:
            k = len(set(fold.values()))
            fold_notes.append(
                f"{fam}: {len(fold)} runs"
                + (f" ({contents} distinct)" if contents < len(fold) else "")
                + ", "
                + ("in-sample (one run)" if k == 1 else "leave-one-run-out" if k == contents else f"{k}-fold")
            )
        for f in fs:
            group = group_of(f)
            p_adr, alone = _loo_median(loo_adr.get(group, {}), prefix_adr[group], f.run.run_id)
            prefix_rows.append(
                {"run_id": f.run.run_id, "group": group, "family": fam, "prefix_adr": p_adr,
                 "first_call_residual": prefix_adr[group].get(f.run.run_id), "in_sample": alone}
            )  # fmt: skip
            p_ex: float | None = None
            if "exact" in strategies and f.exact is not None:
                p_ex, alone_ex = _loo_median(loo_exact.get(group, {}), prefix_exact[group], f.run.run_id)
                prefix_rows[-1].update(prefix_exact=p_ex, exact_in_sample=alone_ex)
            adr_est = adr_tokens(f.counts, adr) + p_adr
            estimates: dict[str, tuple[np.ndarray, np.ndarray]] = {}
            if "adr" in strategies:
                estimates["adr"] = (adr_est, calibrate(adr_est, f.prompt, seed))
            if "fitted" in strategies:
                j = fold[f.run.run_id]
                if j not in fold_fits:
                    out = np.array([fold[o.run.run_id] != j for o in fs])
                    others = [o for o, k in zip(fs, out.tolist(), strict=True) if k]
                    # a fold's fit gives its estimator only: not the per-class table, a second robust fit
                    fold_fits[j] = (
                        fit_family(fam, others, classes=False, rows=read[fam].take(out))
                        if others
                        else full_fits[fam]
                    )
                fit = fold_fits[j]
                if group in fit.prefix:
                    est = fit.estimator(group)
                else:
                    base = fit.estimator(prefix=0.0)
                    est = base.with_(prefix_tokens=unseen_prefix(first_call_residual(f, base) or 0.0))
                fitted_est = adr_tokens(f.counts, est) + est.prefix_tokens
                estimates["fitted"] = (fitted_est, calibrate(fitted_est, f.prompt, seed))
            if "anchored" in strategies:
                raw = anchored(f, adr, adr_est, 1.0)
                cal = anchored(f, adr, calibrate(adr_est, f.prompt, seed), seed)
                estimates["anchored"] = (raw, cal)
            if "exact" in strategies:
                if f.exact is None or p_ex is None:
                    exact_missing.add(f"{f.run.source}:{f.run.model or 'unrecorded model'}")
                else:
                    exact_est = _exact_tokens(f, adr) + p_ex
                    estimates["exact"] = (exact_est, calibrate(exact_est, f.prompt, seed))
            frames.extend(_turn_columns(f, fam, s, e, c) for s, (e, c) in estimates.items())
    if exact_missing:
        claude = any("claude" in m.lower() for m in exact_missing)
        notes.append(
            "exact: no offline tokenizer for "
            + ", ".join(sorted(exact_missing))
            + (
                " (Claude's tokenizer is not public; no proxy substituted)"
                if claude
                else " (none substituted)"
            )
        )
    for key, what in (
        ("in_sample", "transcript-estimate prefix"),
        ("exact_in_sample", "exact-strategy prefix"),
    ):
        alone = sorted({r["group"] for r in prefix_rows if r.get(key)})
        if alone:
            notes.append(
                f"{what} fitted in-sample (the run's own first call; no other run of its kind): {', '.join(alone)}"
            )
    if fold_notes:
        notes.append(
            "fitted: divisors scored out of sample — leave-one-run-out up to "
            f"{MAX_FOLDS} runs per tokenizer family, {MAX_FOLDS}-fold beyond (runs dealt round the folds in "
            "run_id order; copies of a run share a fold); no closed form, as the fit is a robust (soft-L1) "
            "non-negative one: " + "; ".join(fold_notes)
        )
    notes.append(
        "every strategy adds the unseen prefix (system prompt / tool schemas the source does not record), fitted "
        "per source and role (+system / +tools when the run records them) as the leave-one-run-out median "
        "first-call residual (a run's copies left out with it), never below zero (the prefixes are listed per "
        "group)"
    )
    turns = _join_turns(frames)
    fits = pd.DataFrame(
        [
            {"family": fam, "runs": fit.runs, "calls": fit.turns, "prose_chars_per_token": fit.prose_divisor,
             "dense_chars_per_token": fit.dense_divisor, "per_message": fit.per_message,
             "per_tool_call": fit.per_tool_call,
             **{f"chars_per_token[{c}]": np.nan if v is None else v for c, v in fit.class_chars_per_token.items()},
             **{f"prefix[{g}]": v for g, v in fit.prefix.items()}, "notes": "; ".join(fit.notes)}
            for fam, fit in sorted(full_fits.items())
        ]
    )  # fmt: skip
    classes = _classes(sets) if tables else pd.DataFrame()
    if not classes.empty:
        # where no exact tokenizer exists, the per-class fit from reported usage is the evidence there is
        fitted_cpt = [
            full_fits[fam].class_chars_per_token.get(c) if (fam := family_of(m)) in full_fits else None
            for m, c in zip(classes["model"], classes["class"], strict=True)
        ]
        classes["chars_per_token_fitted"] = np.array(
            [np.nan if v is None else v for v in fitted_cpt], dtype=float
        )
        adr_div = np.where(classes["class"] == "prose", adr.prose_divisor, adr.dense_divisor)
        classes["adr_over_fitted"] = classes["chars_per_token_fitted"] / adr_div
    return EstimatorStudy(
        turns=turns,
        classes=classes,
        fits=fits,
        prefixes=pd.DataFrame(prefix_rows),
        notes=tuple(notes),
        seed=seed,
    )


def _exact_tokens(f: RequestFeatures, adr: Estimator) -> np.ndarray:
    """Exact tokens of each request's text plus ADR-107's per-message and per-call overheads."""
    assert f.exact is not None
    return f.exact.sum(axis=1) + f.counts[:, 4] * adr.per_message + f.counts[:, 5] * adr.per_tool_call


TURN_COLUMNS: tuple[str, ...] = (
    "run_id", "source", "role", "model", "family", "strategy", "turn", "prompt", "estimate", "calibrated",
    "extends", "after_first", "growth", "bound_violation",
)  # fmt: skip


def _turn_columns(
    f: RequestFeatures, fam: str, strategy: str, est: np.ndarray, cal: np.ndarray
) -> dict[str, np.ndarray]:
    """One run's comparable calls under one strategy, as column arrays (``TURN_COLUMNS``); the study joins
    every run's columns once, so its cost stays linear in calls rather than in frames built."""
    ok = f.comparable
    prompt = f.prompt
    prev = np.concatenate([[np.nan], prompt[:-1]])
    growth = np.maximum(0.0, np.nan_to_num(prompt - prev, nan=0.0))
    first = np.flatnonzero(ok)[0]
    after_first = np.arange(len(f)) > first
    # A ratio needs a positive figure on both sides: a reported prompt of 0 or an empty request is no evidence.
    ok = ok & (prompt > 0) & (est > 0) & (cal > 0)
    n = int(ok.sum())

    def same(value: object) -> np.ndarray:
        return _same(value, n)

    return {
        "run_id": same(f.run.run_id),
        "source": same(f.run.source),
        "role": same(f.run.role),
        "model": np.array([m or "unrecorded" for m in f.models], dtype=object)[ok],
        "family": same(fam),
        "strategy": same(strategy),
        "turn": f.turns[ok],
        "prompt": prompt[ok],
        "estimate": np.asarray(est, dtype=float)[ok],
        "calibrated": np.asarray(cal, dtype=float)[ok],
        "extends": f.extends[ok],
        "after_first": after_first[ok],
        "growth": growth[ok],
        "bound_violation": ((prompt - cal) > growth)[ok],
    }


def _same(value: object, n: int) -> np.ndarray:
    """``n`` times ``value``, as an object column."""
    out = np.empty(n, dtype=object)
    out[:] = value
    return out


def _join_turns(parts: Sequence[dict[str, np.ndarray]]) -> pd.DataFrame:
    if not parts:
        return pd.DataFrame()
    return pd.DataFrame({c: np.concatenate([p[c] for p in parts]) for c in TURN_COLUMNS})


def _classes(sets: Sequence[RequestFeatures]) -> pd.DataFrame:
    """Per source, model and content class: segments, characters, the ADR estimate and, where an exact
    tokenizer exists, exact tokens, chars per token, the share of segments ADR under-counts and the
    distribution (p50, p90, max) of exact / ADR per segment."""
    from workbench.estimate.content import segments

    adr = Estimator()
    # A segment as three typed entries (its group, characters, exact tokens): a tuple each held ~10x the memory.
    groups: dict[tuple[str, str, str], int] = {}
    group, chars, exact = array("l"), array("q"), array("d")
    for f in sets:
        models = {m for m in f.models if m}
        if len(models) == 1:
            model = models.pop()
        else:
            families = {family_of(m) for m in models}
            model = f"mixed ({families.pop()})" if len(families) == 1 else "mixed"
        counter = counter_for_model(model) if f.exact is not None else None
        for m in f.run.messages:
            for cls, text in segments(m):
                if text:
                    group.append(groups.setdefault((f.run.source, model, cls), len(groups)))
                    chars.append(len(text))
                    exact.append(float(counter.count(text)) if counter is not None else np.nan)
    if not groups:
        return pd.DataFrame()
    keys = np.array(list(groups), dtype=object).reshape(len(groups), 3)
    at = keys[np.asarray(group, dtype=np.intp)]
    n = np.asarray(chars, dtype=np.int64)
    divisor = np.where(at[:, 2] == "prose", adr.prose_divisor, adr.dense_divisor)
    df = pd.DataFrame(
        {"source": at[:, 0], "model": at[:, 1], "class": at[:, 2], "chars": n, "adr_tokens": n / divisor,
         "exact_tokens": np.asarray(exact, dtype=float)}
    )  # fmt: skip
    df["ratio"] = df["exact_tokens"] / df["adr_tokens"]
    g = df.groupby(["source", "model", "class"], sort=True)
    out = g.agg(
        segments=("chars", "size"),
        chars=("chars", "sum"),
        adr_tokens=("adr_tokens", "sum"),
        exact_tokens=("exact_tokens", lambda x: x.sum(min_count=1)),
        adr_under_rate=("ratio", lambda x: (x > 1).mean() if x.notna().any() else np.nan),
        exact_over_adr_p50=("ratio", "median"),
        exact_over_adr_p90=("ratio", lambda x: x.quantile(0.9)),
        exact_over_adr_max=("ratio", "max"),
    ).reset_index()
    out["chars_per_token_exact"] = out["chars"] / out["exact_tokens"]
    out["adr_over_exact"] = out["adr_tokens"] / out["exact_tokens"]
    return out
