"""``python -m workbench.importers``: the facts table of every importer, between the markers
docs/importers/README.md keeps it in (:mod:`workbench.importers.contract`)."""

from workbench.importers import importers
from workbench.importers.contract import BEGIN, END, table

print(BEGIN)
print(table(importers()), end="")
print(END)
