"""A client for the state module: ``state::*`` functions and ``state`` triggers (``worker.state``)."""

from __future__ import annotations

import builtins
import uuid
from collections.abc import Callable
from typing import Any, Literal, TypedDict

from ._clients import ClientHost, handler_with_trigger

__all__ = ["StateClient", "StateEvent"]


class StateEvent(TypedDict):
    """What a ``state`` trigger delivers."""

    type: Literal["state"]
    event_type: Literal["state:created", "state:updated", "state:deleted"]
    scope: str
    key: str
    old_value: Any
    new_value: Any


class StateClient:
    def __init__(self, host: ClientHost) -> None:
        self._host = host

    async def get(self, scope: str, key: str) -> Any:
        """The value, or None when the key does not exist."""
        return await self._host.trigger("state::get", {"scope": scope, "key": key})

    async def set(self, scope: str, key: str, value: Any) -> dict[str, Any]:
        """Stores ``value``; returns ``{"old_value", "new_value"}``."""
        return await self._host.trigger("state::set", {"scope": scope, "key": key, "value": value})  # type: ignore[no-any-return]

    async def delete(self, scope: str, key: str) -> dict[str, Any]:
        """Removes the key; returns ``{"old_value"}``."""
        return await self._host.trigger("state::delete", {"scope": scope, "key": key})  # type: ignore[no-any-return]

    async def update(self, scope: str, key: str, ops: list[dict[str, Any]]) -> dict[str, Any]:
        """Applies update operations atomically (``{"type": "increment", "path": "n", "by": 1}`` …)."""
        return await self._host.trigger("state::update", {"scope": scope, "key": key, "ops": ops})  # type: ignore[no-any-return]

    async def list(self, scope: str) -> builtins.list[Any]:
        """The values of a scope."""
        return await self._host.trigger("state::list", {"scope": scope})  # type: ignore[no-any-return]

    async def list_groups(self) -> builtins.list[str]:
        """The scopes that hold values."""
        return (await self._host.trigger("state::list_groups", {}))["groups"]  # type: ignore[no-any-return]

    def on_change(
        self,
        scope: str,
        handler: Callable[[StateEvent], Any] | None = None,
        *,
        key: str | None = None,
        condition_function_id: str | None = None,
        function_id: str | None = None,
    ) -> Any:
        """Runs ``handler(event)`` after every change in ``scope`` (a function and a ``state`` trigger).

        Without ``handler`` it is a decorator: ``@worker.state.on_change("orders")``.
        """
        config: dict[str, Any] = {"scope": scope}
        if key is not None:
            config["key"] = key
        if condition_function_id is not None:
            config["condition_function_id"] = condition_function_id
        fid = function_id or f"on-state-change::{uuid.uuid4()}"
        return handler_with_trigger(self._host, fid, handler, f"Handles changes of state scope {scope}", "state", config)
