"""Charts: every function returns a matplotlib Figure and never shows it."""
