"""``eq_``, as nose.tools defines it."""
from __future__ import annotations


def eq_(a, b, msg: str | None = None) -> None:
    """Raise ``AssertionError`` unless ``a == b`` (with ``msg``, or both values, as the message)."""
    if not a == b:
        raise AssertionError(msg or f"{a!r} != {b!r}")
