"""Runs read from where teams keep them rather than from files: a running observability backend.

A source is named by a URL wherever a PATH is accepted (``workbench inspect phoenix://127.0.0.1:6006/my-project``,
``wb.load("phoenix://…")``). Today: Arize Phoenix (:mod:`workbench.sources.phoenix`, docs/importers/phoenix.md).
"""

from __future__ import annotations

import os
import re

# ``phoenix://``, ``phoenix+https://``; also the single-slash form a path library leaves of it (``Path`` folds
# ``//`` into ``/``), so a URL that passed through ``Path(...)`` is still recognised.
_REMOTE = re.compile(r"^phoenix(\+https?)?:/")


def is_remote(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a backend rather than a file or folder."""
    return bool(_REMOTE.match(os.fspath(path)))
