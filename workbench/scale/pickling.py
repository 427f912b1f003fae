"""How the cache pickles what an importer made of a file: each schema model as its class, its field-name set and its
fields' values (docs/scale.md, "the corpus cache"), so that a run read back from the cache is about 37% smaller than
one pickled as pydantic pickles it, and equal to it field for field.

Two things pydantic's own pickle restores per model object, and a loaded run does not need per object:

- its ``model_fields_set``, a ``set`` per model (31,058 of them in the 125 shared runs, 14.6 of their 53.4 MB):
  here one :class:`~workbench.trace.schema.SharedFields` per distinct set of names, written once an entry and
  read back as one object in the process (:func:`shared_fields`);
- its ``__dict__``, assigned whole, so a dict of its own per object: here its fields are set one by one, so the
  object's dict shares its keys with every other of its class (CPython's key-sharing dicts: 208 bytes for a Turn
  against 464).

Measured in docs/scale.md ("Pickled compactly"). A first load holds one file's runs twice, as built and as read
back from the entry it wrote: one file's worth, within the read limits.

Call signatures::

    dumps(value) -> bytes      # pickle.loads reads it back (the restore function below is what it calls)
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from workbench.trace import schema
from workbench.trace.schema import SharedFields

_set = object.__setattr__


def dumps(value: object) -> bytes:
    """``value`` pickled (the highest protocol), every model in it as :func:`restore` rebuilds it."""
    out = io.BytesIO()
    _Pickler(out).dump(value)
    return out.getvalue()


def restore(
    cls: type[BaseModel], names: SharedFields, keys: tuple[str, ...], values: Iterable[Any]
) -> BaseModel:
    """A model as pydantic's ``__setstate__`` would make it (no extra and no private attributes: models with either
    are pickled as pydantic pickles them), its field-name set ``names`` shared and its fields set one by one."""
    obj = cls.__new__(cls)
    _set(obj, "__pydantic_fields_set__", names)
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    for key, value in zip(keys, values, strict=True):
        _set(obj, key, value)
    return obj


def _share_keys() -> None:
    """One model of each schema class restored with every field, in order, and dropped. Measured on CPython 3.11:
    models restored later share their dict's keys only if such a model came first; after many models of a class
    were validated (an importer's parse) and none restored, a restored one gets a dict of its own (464 bytes for a
    Turn, not 208). Importing this module before parsing (``workbench.load`` does) keeps a first load's runs as
    small as a later one's. Costs nothing if the interpreter shares no keys: the dicts are then as pydantic's."""
    for obj in vars(schema).values():
        if isinstance(obj, type) and issubclass(obj, BaseModel) and obj.__module__ == schema.__name__:
            names = tuple(obj.model_fields)
            restore(obj, SharedFields(), names, (None,) * len(names))


_share_keys()


@lru_cache(maxsize=1024)
def shared_fields(names: frozenset[str]) -> SharedFields:
    """One set per distinct set of names in this process, whichever entry it was read from."""
    return SharedFields(names)


class _Pickler(pickle.Pickler):
    """Pickles models as ``restore(class, names, keys, values)``; the names, the key tuples and equal strings
    (a model name on every turn, a call id beside its result's) are one object per distinct value in one
    ``dumps``, so pickle's memo writes each once and a read gives one object."""

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._keys: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._strs: dict[str, str] = {}

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is SharedFields:
            return shared_fields, (frozenset(obj),)
        if (
            not isinstance(obj, BaseModel)
            or obj.__pydantic_extra__ is not None
            or obj.__pydantic_private__ is not None
            or type(obj).__getstate__ is not BaseModel.__getstate__
        ):
            return NotImplemented
        fields, strs = obj.__dict__, self._strs
        keys = self._keys.setdefault(tuple(fields), tuple(fields))
        values = tuple(strs.setdefault(v, v) if type(v) is str else v for v in fields.values())
        return restore, (type(obj), shared_fields(frozenset(obj.__pydantic_fields_set__)), keys, values)
