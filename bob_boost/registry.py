"""Name -> class registries for weak machines and losses.

Weak machines are registered under the ``MachineType`` string that the HDF5
format stores; losses under a short name that scripts and the command line
use. Third-party packages register theirs either by calling the decorators
below at import time or through the entry-point groups
``bob_boost.weak_machines`` and ``bob_boost.losses``, which are read the first
time a name is not found.
"""
from __future__ import annotations

from importlib import metadata
from typing import TypeVar
from collections.abc import Callable

from .exceptions import InvalidTypeError, InvalidValueError

T = TypeVar("T", bound=type)

WEAK_MACHINE_GROUP = "bob_boost.weak_machines"
LOSS_GROUP = "bob_boost.losses"

_weak_machines: dict[str, type] = {}
_losses: dict[str, type] = {}
_entry_points_loaded: set[str] = set()


def _register(table: dict[str, type], key: str, cls: type, kind: str) -> None:
    if not isinstance(key, str) or not key:
        raise InvalidValueError(f"{kind} name must be a non-empty string, got {key!r}")
    existing = table.get(key)
    if existing is not None and existing is not cls:
        raise InvalidValueError(f"{kind} name {key!r} is already registered to "
                                f"{existing.__module__}.{existing.__qualname__}")
    table[key] = cls


def register_weak_machine(cls: T) -> T:
    """Class decorator: register a weak machine under its ``machine_type``.

    The class must define ``machine_type`` (the string stored in the file),
    ``save(group)`` and the classmethod ``load(group)``.
    """
    for attribute in ("machine_type", "save", "load"):
        if not hasattr(cls, attribute):
            raise InvalidTypeError(f"weak machine class {cls.__name__} lacks {attribute!r}")
    _register(_weak_machines, cls.machine_type, cls, "weak machine")
    return cls


def register_loss(cls: T) -> T:
    """Class decorator: register a loss class under its ``name`` attribute."""
    _register(_losses, getattr(cls, "name", ""), cls, "loss")
    return cls


def _load_entry_points(group: str, table: dict[str, type], register: Callable[[type], type]) -> None:
    if group in _entry_points_loaded:
        return
    _entry_points_loaded.add(group)
    for entry_point in metadata.entry_points(group=group):
        cls = entry_point.load()
        if table.get(entry_point.name) is not cls:
            register(cls)


def weak_machine_class(machine_type: str) -> type:
    """Return the weak-machine class registered for ``machine_type``.

    Raises
    ------
    KeyError
        If no class is registered under that name.
    """
    if machine_type not in _weak_machines:
        _load_entry_points(WEAK_MACHINE_GROUP, _weak_machines, register_weak_machine)
    try:
        return _weak_machines[machine_type]
    except KeyError:
        raise KeyError(f"unknown weak machine type {machine_type!r}; known: {sorted(_weak_machines)}") from None


def loss_class(name: str) -> type:
    """Return the loss class registered under ``name``.

    Raises
    ------
    KeyError
        If no loss is registered under that name.
    """
    if name not in _losses:
        _load_entry_points(LOSS_GROUP, _losses, register_loss)
    try:
        return _losses[name]
    except KeyError:
        raise KeyError(f"unknown loss {name!r}; known: {sorted(_losses)}") from None


def weak_machine_types() -> list[str]:
    """Names of the registered weak-machine types."""
    _load_entry_points(WEAK_MACHINE_GROUP, _weak_machines, register_weak_machine)
    return sorted(_weak_machines)


def loss_names() -> list[str]:
    """Names of the registered losses."""
    _load_entry_points(LOSS_GROUP, _losses, register_loss)
    return sorted(_losses)
