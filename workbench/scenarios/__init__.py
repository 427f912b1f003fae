"""Synthetic runs: the seed's documented shapes (``seed``) and corpus generators."""
