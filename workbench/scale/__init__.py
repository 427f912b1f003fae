"""The speed machinery, above ``workbench.trace`` and ``workbench.replay``: the corpus cache and its index (per-file
facts, the path index), lazy run storage, loading through them, sweeps from a corpus's sheet and on workers, and the
processes work runs on (docs/scale.md). What it gives is what the layers below give, sooner."""

from workbench.scale.loading import load, load_file, read_file

__all__ = ["load", "load_file", "read_file"]
