"""Triggers: registering them, their registration results, and trigger types this worker provides."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ._connection import Connection, Frame
from ._convert import dumps
from .errors import TriggerRegistrationError

__all__ = [
    "TriggerAction",
    "TriggerConfig",
    "TriggerRef",
    "TriggerStatus",
    "TriggerTypeHandler",
    "TriggerTypeRef",
]


class TriggerAction:
    """How ``worker.trigger`` calls a function: wait for the result (no action), or not."""

    @staticmethod
    def void() -> dict[str, Any]:
        """Fire and forget: ``trigger`` returns None at once."""
        return {"type": "void"}

    @staticmethod
    def enqueue(queue: str) -> dict[str, Any]:
        """Put the call on a named queue of the engine's queue module: ``trigger`` returns ``{"messageReceiptId": …}``."""
        return {"type": "enqueue", "queue": queue}


@dataclass(frozen=True)
class TriggerStatus:
    """The engine accepted the trigger: applied, or ``parked`` until a worker provides its type."""

    parked: bool


@dataclass(frozen=True)
class TriggerConfig:
    """A trigger as a trigger type's handler receives it."""

    id: str
    function_id: str | None
    config: Any
    metadata: dict[str, Any] | None = None


class TriggerTypeHandler(Protocol):
    """Implemented by a worker that provides a trigger type; raise to refuse a trigger. Methods may be async."""

    def register_trigger(self, trigger: TriggerConfig) -> Any: ...
    def unregister_trigger(self, trigger: TriggerConfig) -> Any: ...


@dataclass
class TriggerRef:
    id: str
    #: Resolves to a TriggerStatus once the engine accepted the trigger; raises TriggerRegistrationError when refused.
    ready: asyncio.Future[TriggerStatus]
    _unregister: Callable[[], None] = field(repr=False)

    def unregister(self) -> None:
        self._unregister()


@dataclass
class TriggerTypeRef:
    id: str
    _unregister: Callable[[], None] = field(repr=False)

    def unregister(self) -> None:
        self._unregister()


@dataclass
class TriggerEntry:
    message: dict[str, Any]
    ready: asyncio.Future[TriggerStatus]


@dataclass
class TriggerTypeEntry:
    message: dict[str, Any]
    handler: Any


class Triggers:
    def __init__(self, connection: Connection, log: logging.Logger) -> None:
        self.connection = connection
        self.log = log
        self.registered: dict[str, TriggerEntry] = {}
        self.types: dict[str, TriggerTypeEntry] = {}
        self.on_rejected: Callable[[TriggerRegistrationError], None] = lambda err: None

    def on_result(self, msg: dict[str, Any]) -> None:
        entry = self.registered.get(str(msg.get("id")))
        if entry is None:
            return
        error = msg.get("error")
        if isinstance(error, dict):
            err = TriggerRegistrationError(
                str(error.get("code", "trigger_registration_failed")),
                str(error.get("message", "trigger rejected")),
                entry.message["id"],
                entry.message["trigger_type"],
            )
            # The engine does not keep a refused trigger; neither does the replay.
            del self.registered[entry.message["id"]]
            self.log.warning("flint: trigger %s → %s refused: %s", entry.message["trigger_type"], entry.message["function_id"], err)
            if not entry.ready.done():
                entry.ready.set_exception(err)
            self.on_rejected(err)
        elif not entry.ready.done():
            entry.ready.set_result(TriggerStatus(parked=msg.get("parked") is True))

    def on_forwarded(self, msg: dict[str, Any]) -> None:
        """The engine applies (or removes) a trigger of a type this worker provides; registrations are answered."""
        registering = msg.get("type") == "registertrigger"
        type_id = msg.get("trigger_type")
        trigger = TriggerConfig(
            id=str(msg.get("id")),
            function_id=msg.get("function_id") if registering else None,
            config=msg.get("config") if registering else None,
            metadata=msg.get("metadata") if registering and isinstance(msg.get("metadata"), dict) else None,
        )

        def answer(error: dict[str, str] | None = None) -> None:
            if not registering:
                return
            frame: dict[str, Any] = {"type": "triggerregistrationresult", "id": trigger.id, "trigger_type": type_id, "function_id": trigger.function_id}
            if error is not None:
                frame["error"] = error
            self.connection.send(Frame("triggerregistrationresult", dumps(frame)))

        entry = self.types.get(type_id) if isinstance(type_id, str) else None
        if entry is None:
            answer({"code": "trigger_type_not_found", "message": f"Trigger type {type_id} is not provided by this worker"})
            return

        handler = entry.handler

        async def apply() -> None:
            try:
                method = handler.register_trigger if registering else handler.unregister_trigger
                outcome = method(trigger)
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception as err:
                if not registering:
                    self.log.warning("flint: unregistering trigger %s of type %s failed: %s", trigger.id, type_id, err)
                answer({"code": "trigger_registration_failed", "message": str(err) or type(err).__name__})
                return
            answer()

        asyncio.get_running_loop().create_task(apply())
