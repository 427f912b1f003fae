"""Measured shapes the synthetic corpus reproduces, each with its provenance. One place for each number."""

from __future__ import annotations

from datetime import UTC, datetime

# seed 001 (linear.go), DefaultLeafTokens comment: "The median call carried 14.2k prompt tokens".
MEDIAN_LEAF_PROMPT = 14_200
# seed 001 (linear.go), DefaultLeafTokens comment: "the leaves that did the work ran 14 to 41 turns".
LEAF_TURNS_MIN = 14
LEAF_TURNS_MAX = 41
# seed 001 (linear.go), DefaultLeafTokens comment, table: the two honest leaves spent 184,411 and 190,524.
HONEST_LEAF_SPENT = (184_411, 190_524)
# seed 001 (linear.go), DefaultLeafTokens comment, table: "Answer remaining offenders  14  268,971" —
# "a job that wants splitting and is not an argument for a larger number".
SPLIT_WORTHY_LEAF = (14, 268_971)
# Characters per token the generated text is sized with (docs/anchors.md §7: prose ~4.7-5.0, code ~4.8 and
# tool output ~4.0 chars/token on o200k). Synthetic content is sized, not tokenized: see traces/README.md.
CHARS_PER_TOKEN = {"prose": 4.8, "code": 4.8, "tool": 4.0}

# A fixed, invented epoch for synthetic timestamps: generated runs never read the clock.
SYNTHETIC_EPOCH = datetime(2026, 9, 11, 9, 0, 0, tzinfo=UTC)
