"""Every number the estimator and the context-window manager rest on, each in one place with its provenance.

Seed constants come from ADR-107 (``shared/seeds/000_a494d6890435e75d.txt``); the rest are marked as the
workbench's own choice (the ADR gives no number) or cite the design note they come from.
"""

from __future__ import annotations

# ADR-107 "Over-counting estimator": prose divides by 3.5.
PROSE_CHARS_PER_TOKEN = 3.5
# ADR-107 "Over-counting estimator": DENSE segments (tool JSON args, tool_result payloads, schema block) by 2.5.
DENSE_CHARS_PER_TOKEN = 2.5
# ADR-107 "Reserve + graceful failure": an unknown context length falls back to a conservative 8192.
UNKNOWN_CONTEXT_LENGTH = 8_192

# Workbench choice (ADR-107 names a per-message overhead without a number); `workbench.estimate.fit` fits it.
PER_MESSAGE_OVERHEAD = 4.0
# Workbench choice (ADR-107 names a per-tool-call overhead without a number); fitted like the above.
PER_TOOL_CALL_OVERHEAD = 8.0
# Workbench choice: ADR-107 says only "seeded above 1.0"; 1.10 errs high by a tenth before the first usage.
CALIBRATION_SEED = 1.10
# Workbench choice: ADR-107's "proportional floor" for the reserve when neither max_tokens nor an output cap
# is known, as a share of the context length.
RESERVE_FLOOR_SHARE = 0.10
# Workbench choice: the safety margin when a policy gives none, as a share of the context length.
SAFETY_SHARE = 0.02

# Claude Code's auto-compact trigger, as de-minified in claude-code issue #31806 and the later analysis quoted
# in docs/anchors.md §5: threshold = window - min(max_output, 20,000) - 13,000.
CLAUDE_CODE_OUTPUT_RESERVE_CAP = 20_000
# docs/anchors.md §5: the 13,000-token buffer below the effective window (claude-code #31806).
CLAUDE_CODE_AUTOCOMPACT_BUFFER = 13_000

# The estimator strategies the study compares (docs/estimator.md, "Estimator strategies worth comparing").
STRATEGIES: tuple[str, ...] = ("adr", "fitted", "anchored", "exact")

# Workbench choice: below this many consecutive-call deltas a family's divisors are not fitted (ADR-107's kept,
# and the study says so): a handful of deltas fits noise.
MIN_FIT_DELTAS = 10
# Workbench choice: a fitted coefficient whose standard error exceeds this share of its value is not identified
# by the data (reported as such, not printed as a figure).
MAX_RELATIVE_SE = 0.25
# Workbench choice: the range of characters per token any real tokenizer gives (CJK text ~0.7, dense code ~2,
# English prose ~4, long repeated runs ~8); a fit outside it is an artefact of the data, not a tokenizer.
PLAUSIBLE_CHARS_PER_TOKEN = (0.5, 12.0)
