"""Interactive views for notebooks (ipywidgets)."""

from workbench.widgets.explorer import Explorer

__all__ = ["Explorer"]
