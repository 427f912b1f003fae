"""Every registered importer module is an :class:`~workbench.importers.transcript.Importer`: named and
versioned, with its facts contract, ``sniff`` and ``load``, and a cache declaration that is one of the two the
corpus cache reads (only its own file, or the other files named by ``dependencies``)."""

from __future__ import annotations

import inspect
from types import ModuleType

import pytest

from workbench.importers import IMPORTER_MODULES, importers
from workbench.importers.contract import Fact, contract_of
from workbench.importers.transcript import Importer

ENROLLED = importers()


def test_every_listed_module_is_installed() -> None:
    assert [m.__name__ for m in ENROLLED] == list(IMPORTER_MODULES)


@pytest.mark.parametrize("module", ENROLLED, ids=[m.__name__.rsplit(".", 1)[1] for m in ENROLLED])
def test_every_importer_satisfies_the_protocol(module: ModuleType) -> None:
    assert isinstance(module, Importer)
    assert isinstance(module.NAME, str) and module.NAME
    assert isinstance(module.VERSION, str) and module.VERSION
    facts = contract_of(module)
    assert facts is not None and set(facts) == set(Fact)
    assert list(inspect.signature(module.sniff).parameters) == ["path", "head"]
    assert list(inspect.signature(module.load).parameters) == ["path"]
    # the cache declaration: only its own file, or every other file it reads named by dependencies(path)
    assert type(module.CACHEABLE) is bool
    has_deps = callable(getattr(module, "dependencies", None))
    assert module.CACHEABLE is not has_deps, "CACHEABLE = True, or CACHEABLE = False with dependencies(path)"
    if has_deps:
        assert list(inspect.signature(module.dependencies).parameters) == ["path"]


def test_a_module_missing_a_member_is_not_an_importer() -> None:
    incomplete = ModuleType("incomplete")
    vars(incomplete).update(NAME="x", VERSION="1")
    assert not isinstance(incomplete, Importer)
