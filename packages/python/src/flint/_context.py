"""The invocation being handled, carried by a context variable (also into sync handlers' threads)."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

__all__ = ["Caller", "InvocationContext", "current_invocation"]


@dataclass(frozen=True)
class Caller:
    """Who made a call, when the caller connected through a listener with an access policy."""

    worker_id: str
    #: What that listener's auth function said of the caller (its identity).
    context: Any = None


@dataclass(slots=True)
class InvocationContext:
    """What a handler gets besides its payload (its second parameter, or :func:`current_invocation`)."""

    function_id: str
    #: Absent for a fire-and-forget call: nobody waits for the result.
    invocation_id: str | None
    #: The W3C trace context of the call (``00-<trace id>-<span id>-<flags>``).
    traceparent: str | None = None
    baggage: str | None = None
    caller: Caller | None = None

    @property
    def trace_id(self) -> str | None:
        parts = self.traceparent.split("-") if self.traceparent else []
        return parts[1] if len(parts) == 4 else None

    @property
    def span_id(self) -> str | None:
        parts = self.traceparent.split("-") if self.traceparent else []
        return parts[2] if len(parts) == 4 else None


_current: ContextVar[InvocationContext | None] = ContextVar("flint_invocation", default=None)


def current_invocation() -> InvocationContext | None:
    """The invocation whose handler is running (in its task, or its thread for a sync handler), else None."""
    return _current.get()
