"""Token estimation for the context-window manager (ADR-107) and the estimator study: ``Estimator``, ``Calibration``,
``MessageCosts``, exact tokenizers (``tokenizers``), the seed loop's context law (``ctxbudget``) and fitting (``fit``).
The study (``workbench.estimate.study.study``) is imported on its own: it needs pandas and scipy.
"""

from typing import TYPE_CHECKING

from workbench._lazy import attach

if TYPE_CHECKING:  # imported on first use (workbench/_lazy.py)
    from workbench.estimate.calibration import Calibration
    from workbench.estimate.constants import STRATEGIES
    from workbench.estimate.content import CONTENT_CLASSES, ContentClass, Counts, count_message, count_schemas
    from workbench.estimate.estimator import Estimator, MessageCosts

__getattr__, __dir__ = attach(__name__, __file__)

__all__ = ["CONTENT_CLASSES", "STRATEGIES", "Calibration", "ContentClass", "Counts",
           "Estimator", "MessageCosts", "count_message", "count_schemas"]  # fmt: skip
