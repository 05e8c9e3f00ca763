"""Remembering what is read from a callable (its signature) for the callables seen again."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def per_arguments(read: Callable[..., T]) -> Callable[..., T]:
    """``read``, remembered per arguments (the last 1,024 sets) when they are hashable.

    For what depends on a callable alone, such as its signature: every Kit and Agent reads the
    same plugin functions and factories again. Unhashable arguments are read every time, and
    an exception is never remembered.
    """
    cached = functools.lru_cache(maxsize=1024)(read)

    @functools.wraps(read)
    def once(*args: object) -> T:
        try:
            hash(args)
        except TypeError:
            return read(*args)
        return cached(*args)

    return once
