"""Figures to PNG bytes (for files) and base64 (for the self-contained HTML)."""

from __future__ import annotations

import base64
import io

from matplotlib.figure import Figure

DPI = 110


def png_bytes(fig: Figure, dpi: int = DPI) -> bytes:
    buf = io.BytesIO()
    # A fixed Software tag and no timestamps, so the same figure gives the same bytes.
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": "budget-workbench"})
    return buf.getvalue()


def png_base64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
