"""A ``logging`` handler that sends records to the engine's log (``engine::log::<level>``).

Each record carries the trace and span ids of the invocation it was logged in (also from a sync
handler's thread), so the engine's log views and ``engine::logs::list`` can show a call's lines.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from ._context import InvocationContext, current_invocation

if TYPE_CHECKING:
    from .worker import Worker

__all__ = ["LogHandler"]

# Attributes every LogRecord has; the others (``extra=``) are sent as the record's data.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime", "taskName"}


def _level(levelno: int) -> str:
    if levelno >= logging.ERROR:
        return "error"
    if levelno >= logging.WARNING:
        return "warn"
    if levelno >= logging.INFO:
        return "info"
    if levelno >= logging.DEBUG:
        return "debug"
    return "trace"


class LogHandler(logging.Handler):
    """``logging.getLogger().addHandler(flint.LogHandler(worker))``: records go to the engine's log.

    Fire-and-forget: logging never waits for the engine. Records logged while the worker is not
    connected wait in its queue of calls; ``extra={...}`` fields travel as the record's ``data``.
    """

    def __init__(self, worker: Worker, level: int = logging.NOTSET, *, service_name: str | None = None) -> None:
        super().__init__(level)
        self.worker = worker
        self.service_name = service_name
        self._loop = worker._loop

    def emit(self, record: logging.LogRecord) -> None:
        if record.name == "flint" or record.name.startswith("flint."):
            return  # the SDK's own troubles about the connection would loop through it
        try:
            payload: dict[str, Any] = {"message": self.format(record) if self.formatter else record.getMessage()}
            data = {k: v for k, v in vars(record).items() if k not in _STANDARD and not k.startswith("_")}
            data["logger"] = record.name
            if record.exc_info and record.exc_info[1] is not None:
                data["exception"] = logging.Formatter().formatException(record.exc_info)
            payload["data"] = data
            ctx = current_invocation()
            if ctx is not None and ctx.trace_id:
                payload["trace_id"] = ctx.trace_id
                payload["span_id"] = ctx.span_id
            if self.service_name:
                payload["service_name"] = self.service_name
            level = _level(record.levelno)
            if self._loop.is_closed():
                return
            # The record goes out in the invocation's trace context: its baggage tells the engine when the
            # invocation is a log trigger's, so that records it logs do not fire that trigger again.
            if _on_loop(self._loop):
                self._send(level, payload, ctx)
            else:
                self._loop.call_soon_threadsafe(self._send, level, payload, ctx)
        except Exception:
            self.handleError(record)

    def _send(self, level: str, payload: dict[str, Any], ctx: InvocationContext | None) -> None:
        self.worker._fire(f"engine::log::{level}", payload, ctx)


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False
