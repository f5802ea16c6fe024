"""Structural types of the model families (see the architecture spec §3)."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = ["ModelModule"]


@runtime_checkable
class ModelModule(Protocol):
    """A model module: ``Params``; ``init(params, n) -> State``; ``step(params, state, cmd, env, dt)``.

    ``step`` is pure and batched over a leading axis N; one vehicle is N = 1.
    """

    Params: type

    def init(self, params: Any, n: int) -> Any: ...

    def step(self, params: Any, state: Any, cmd: Any, env: Any, dt: Any) -> Any: ...
