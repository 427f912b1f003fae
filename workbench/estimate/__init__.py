"""Token estimation for the context-window manager (ADR-107) and the estimator study.

``Estimator`` (content classes, divisors, overheads, unseen prefix), ``Calibration`` (the only-growing factor),
``MessageCosts`` (incremental per-run cache), exact tokenizer references (``tokenizers``), the seed loop's
context law (``ctxbudget``), fitting (``fit``) and the study (``workbench.estimate.study.study``, imported on
its own: it needs pandas and scipy, which the estimator the live loop and the governors use does not).
"""

from typing import TYPE_CHECKING

from workbench._lazy import attach

if TYPE_CHECKING:  # imported on first use (workbench/_lazy.py)
    from workbench.estimate.calibration import Calibration
    from workbench.estimate.constants import STRATEGIES
    from workbench.estimate.content import CONTENT_CLASSES, ContentClass, Counts, count_message, count_schemas
    from workbench.estimate.estimator import Estimator, MessageCosts

__getattr__, __dir__ = attach(__name__, __file__)

__all__ = [
    "CONTENT_CLASSES",
    "STRATEGIES",
    "Calibration",
    "ContentClass",
    "Counts",
    "Estimator",
    "MessageCosts",
    "count_message",
    "count_schemas",
]
