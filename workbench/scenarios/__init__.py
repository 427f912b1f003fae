"""Synthetic runs of documented shapes, labelled ``source="synthetic"`` with their generator recorded: ``seed``
holds the seed loop's documented shapes, ``corpus`` the bundled ``traces/synthetic`` (``build_corpus(seed)``).
"""
