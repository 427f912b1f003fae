"""budget-workbench: a research workbench for the budgets that govern LLM agent loops.

The public API, in the order an analyst meets it::

    from workbench import load                 # any supported file or folder -> Corpus of Runs
"""

from __future__ import annotations

__version__ = "0.1.0"

from workbench.trace import Corpus, Run, load, load_file

__all__ = ["Corpus", "Run", "__version__", "load", "load_file"]
