"""The report's glossary: every term and column it uses, in words (the "How to read this report" section). One
entry per ``term: meaning``; a meaning continues on the lines indented under it."""

from __future__ import annotations

import re

_TEXT = """\
grant: The cost-meter reading at which a landing starts — not a ceiling. The cost meter counts fresh prompt
    tokens, 10% of cache reads and completion tokens, cumulatively over the run.
landing: What the governor orders once the meter reaches the grant after a tool call: at most 4 more calls to
    wrap up, ending early once the meter passes its reading at the crossing + 20% of the grant. A run can
    therefore bill more than its grant; that is the design.
allowance: What a landing allows: those 4 calls or that 20% of the grant, whichever runs out first.
resolved: A run an external grader labelled resolved (e.g. SWE-bench). Where a run has no label, 'finished'
    takes its place: the recording ended on its own with an answer (stop done, last call not an error). The
    basis column says which.
kept: A resolved run the policy lets finish exactly as recorded: no landing started, nothing cut. This is the
    report's one coverage: 'covers 95%' means 95% of resolved runs are kept.
at risk: A resolved run whose landing started but whose recording ended within the landing's allowance: it
    still ends as recorded, but it was told to wrap up, and a longer ending would have been cut.
lost: A resolved run the policy stops before its recorded end (turns cut): its success is not reached.
not resolved, cut: A run that did not succeed and that the policy stops early: where savings should come from.
censored: The recording ended (cut by its own limit) before this policy decided: the figures are a lower
    bound, never a completion.
diverges: The first recorded turn the policy would have prompted differently (after an injected message, a
    skipped tool batch or a landing order). Turns after it are approximate: the replay reuses the recorded
    turns.
unverified success: The governor's verdict on a run that ended with an answer no grader checked.
ADR-107: The context-window design the workbench replays: a chars/N estimator with an only-growing calibration
    factor and turn-atomic pruning; CONTEXT_TRUNCATED ends a run whose newest turn cannot fit.
as recorded: In the stop tables: the replay ends where the recording ended (nothing cut, no landing), whatever
    the recording's own ending was — including an error.
95% interval (Wilson): Every share carries a 95% Wilson score interval (scipy.stats.binomtest): the range of
    shares consistent with the counts.
cost meter: The running total the governor compares with the grant: fresh prompt tokens, plus 10% of the
    tokens read from the prompt cache, plus completion tokens, summed over the run's calls so far.
raw tokens: Every prompt and completion token the run's calls sent or received, cache reads counted in full:
    what the provider processed, not what the cost meter counts.
cache read, cache write: A provider keeps a prompt's beginning for a while; a later call that starts the same
    way reads it (cheaper: 10% of the input price at Anthropic) instead of sending it fresh. Writing it costs
    more (1.25x input for five minutes, 2x for an hour).
coverage: The share of successful runs a grant keeps (see kept): 'covers 95%' = keeps 95% of them.
invariant: A condition the recommended grant must meet, such as 'keep at least 95% of resolved runs'; the
    analyst sets them (the seed states two of its own, read only in the seed probe).
finished: A recording that ended on its own with an answer (stop done, last call not an error): what counts as
    success when no grader labelled the run.
rule set: A named version of the governor's rules to replay under: current (today's), ink-s9 and older
    (earlier eras of the same rules), openhands (OpenHands' own iteration limit, which reads no grant).
context length: The context window, in tokens, that the replayed context manager must fit each prompt into;
    'none' replays without a manager.
leaf (leaves): One unit the replay works on: a whole run, or one segment of an interactive session (sessions
    are split at each prompt the user typed).
seed (seed 001, linear.go): The design document the workbench's defaults come from: its constants, its
    synthetic runaway and its two invariants. In the seed's code they live in the Go file linear.go.
seed's grant (DefaultLeafTokens): The grant the seed ships with, 220,000 cost-meter tokens; the seed's
    constant is DefaultLeafTokens.
synthetic runaway (seed-warm-runaway): A made-up run the seed describes: 98% of each prompt read from the
    cache, it keeps calling the model and never finishes. The seed's invariants are read on it; in the bundled
    traces its id is seed-warm-runaway.
melt-down (audited melt-downs): A real runaway run the seed's authors examined afterwards: such runs reached
    1.4M raw tokens before they stopped, the figure the seed's first invariant guards.
grant band: The range of grants where both of the seed's invariants hold on its synthetic runaway.
seed probe: The section that reads the seed's invariants on its synthetic runaway, apart from this corpus.
steered: A run that received new guidance (a user's message, a notification) while it was writing its final
    answer: the governor reopens it instead of ending it.
spend saved: The cost-meter tokens (and dollars: genai-prices at each call's date, else the cost the source
    recorded) of the calls the policy cuts.
SWE-Effi, EuTB, EuCB: SWE-Effi (Fan et al. 2025) scores an agent by the area under its resolve rate against a
    per-run budget, up to a cap, as a share of the cap: EuTB for tokens (cap 2M per run), EuCB for dollars
    (cap $1.00 per run). 100% would be every run resolved at no cost; a run resolved above the cap adds
    nothing.
expensive failures: The runs that did not succeed, costliest first: where a grant's savings should come from.
best swept grant: When no swept grant satisfies the invariants: the one that keeps the most successful runs
    (the smallest such grant). Sections that read one grant use it then, and say so.
widen the grid: Sweep grants past the top of the swept grid (--grants START:STOP:STEP): the report replays the
    headline group at larger grants to say which grant would satisfy the invariants.
recommended grant: The smallest swept grant where every invariant holds: the analyst's (keep 95% of resolved
    runs by default) on a real corpus; inside the seed band on the bundled synthetic corpus.
"""


def _entry(text: str) -> tuple[str, str]:
    term, meaning = text.split(": ", 1)
    return term, " ".join(meaning.split())


GLOSSARY: tuple[tuple[str, str], ...] = tuple(_entry(e) for e in re.split(r"\n(?! )", _TEXT.strip()))
