"""Synthetic runs of documented shapes, labelled ``source="synthetic"`` with their generator recorded.

``seed`` holds the seed loop's documented shapes (runaway, repeated call, tool timeouts, empty burn,
length-stopped batch); ``corpus`` the honest leaves, the split-worthy leaf, the transcript that outgrows
its window, and ``build_corpus(seed)`` that assembles the bundled ``traces/synthetic``.
"""
