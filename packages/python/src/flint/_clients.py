"""What the module clients (state, queue) need of a worker, and the function-plus-trigger pair they register."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from .triggers import TriggerRef

__all__ = ["ClientHost", "HandlerWithTrigger"]


class ClientHost(Protocol):
    async def trigger(self, function_id: str, payload: Any = None, *, action: Any = None, timeout: float | None = None) -> Any: ...
    def register_function(self, function_id: str, handler: Callable[..., Any], *, description: str | None = None) -> Any: ...
    def register_trigger(self, type: str, function_id: str, config: Any = None, *, metadata: dict[str, Any] | None = None) -> TriggerRef: ...


@dataclass
class HandlerWithTrigger:
    """A handler registered as a function with a trigger that calls it; ``unregister()`` removes both."""

    function_id: str
    trigger: TriggerRef
    _unregister_function: Callable[[], None]

    @property
    def ready(self) -> Any:
        """Resolves once the engine accepted the trigger."""
        return self.trigger.ready

    def unregister(self) -> None:
        self.trigger.unregister()
        self._unregister_function()


def handler_with_trigger(
    host: ClientHost,
    function_id: str,
    handler: Callable[..., Any] | None,
    description: str,
    trigger_type: str,
    config: dict[str, Any],
) -> Any:
    """Registers ``handler`` as a function with a trigger that calls it: the pair's handle, or, without a
    handler, a decorator that registers the decorated function and returns it unchanged."""

    def register(fn: Callable[..., Any]) -> HandlerWithTrigger:
        ref = host.register_function(function_id, fn, description=description)
        trigger = host.register_trigger(trigger_type, function_id, config)
        return HandlerWithTrigger(function_id, trigger, ref.unregister)

    if handler is not None:
        return register(handler)

    def decorate(fn: Any) -> Any:
        register(fn)
        return fn

    return decorate
