"""A named table of functions, filled by a decorator.

Every algorithm choice of the trainer (advantage estimator, ratio, aggregation, KL estimator, verifier,
task, policy kind, preset) is a name looked up in one of these, so the training loop never branches on
an algorithm's name and a new variant (or a deliberately broken one, for a scenario) is one decorated
function in any module imported before training.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, kind: str) -> None:
        self.kind = kind  # what the names mean, for error messages ("advantage mode")
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def deco(obj: T) -> T:
            if name in self._items:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            self._items[name] = obj
            return obj

        return deco

    def __getitem__(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            raise KeyError(self.unknown(name)) from None

    def unknown(self, name: str) -> str:
        """One line naming the bad name, the closest known one and all choices."""
        close = difflib.get_close_matches(name, list(self._items), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"unknown {self.kind} {name!r}{hint}; choices: {', '.join(self._items)}"

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def names(self) -> list[str]:
        return list(self._items)
