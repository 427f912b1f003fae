"""The facts contract: every importer declares every fact, and docs/importers/README.md carries the table made
from the declarations."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.importers import contract, importers
from workbench.importers.contract import (
    Fact,
    Status,
    contract_of,
    declare,
    in_doc,
    inferred,
    recorded,
    unknown,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "importers" / "README.md"


def test_every_importer_declares_every_fact() -> None:
    for module in importers():
        facts = contract_of(module)
        assert facts is not None, f"{module.__name__} declares no FACTS"
        assert set(facts) == set(Fact)
        for decl in facts.values():
            assert decl.status in set(Status)
            if decl.status is Status.INFERRED:
                assert decl.rule.strip()


def test_the_doc_table_is_the_generated_one() -> None:
    table = in_doc(DOC.read_text())
    assert table is not None, "docs/importers/README.md lost its facts-table markers"
    assert table == contract.table(importers()), "regenerate it: python -m workbench.importers"


def test_declare_refuses_a_missing_or_stray_fact() -> None:
    full = {f.name.lower(): recorded() for f in Fact}
    assert set(declare(**full)) == set(Fact)
    with pytest.raises(ValueError, match="facts not declared: route"):
        declare(**{k: v for k, v in full.items() if k != "route"})
    with pytest.raises(ValueError, match="not a fact of the contract: colour"):
        declare(**full, colour=unknown())
    with pytest.raises(ValueError, match="must name its rule"):
        inferred(" ")


def test_shell_agents_infer_the_workspace_fact_by_the_parser() -> None:
    from workbench.importers import minisweagent

    assert minisweagent.FACTS[Fact.MUTATED].status is Status.INFERRED
    assert "workbench.importers.shell" in minisweagent.FACTS[Fact.MUTATED].rule
