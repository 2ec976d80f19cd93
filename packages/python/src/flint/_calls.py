"""The calls this worker makes (``await worker.trigger(...)``): frames, time-outs and results."""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass
from typing import Any

from ._connection import Connection, Frame
from ._context import InvocationContext, current_invocation
from ._convert import NotSerializable, dumps
from .errors import FlintInvocationError

__all__ = ["Calls"]


@dataclass
class _Pending:
    future: asyncio.Future[Any]
    function_id: str
    started: float
    timer: asyncio.TimerHandle | None = None
    connect_timer: asyncio.TimerHandle | None = None
    #: The frame while it waits in the connection's queue (None once written).
    queued: Frame | None = None


def check_action(action: Any) -> dict[str, Any] | None:
    """The ``action`` of a call, checked: None, ``{"type": "void"}`` or ``{"type": "enqueue", "queue": name}``."""
    if action is None:
        return None
    if isinstance(action, dict):
        kind = action.get("type")
        if kind == "void" and set(action) == {"type"}:
            return {"type": "void"}
        if kind == "enqueue" and set(action) == {"type", "queue"} and isinstance(action.get("queue"), str) and action["queue"]:
            return {"type": "enqueue", "queue": action["queue"]}
    raise ValueError(f"action must be TriggerAction.void() or TriggerAction.enqueue(queue), not {action!r}")


class Calls:
    def __init__(self, connection: Connection, invocation_timeout: float, connect_timeout: float) -> None:
        self.connection = connection
        self.invocation_timeout = invocation_timeout
        self.connect_timeout = connect_timeout
        self.pending: dict[str, _Pending] = {}

    def sending(self, invocation_id: str) -> bool:
        """A queued call is about to be written: True while somebody still awaits it."""
        p = self.pending.get(invocation_id)
        if p is None:
            return False
        if p.connect_timer is not None:
            p.connect_timer.cancel()
        p.queued = None
        return True

    async def trigger(
        self, function_id: str, payload: Any, action: Any, timeout: float | None, context: InvocationContext | None = None
    ) -> Any:
        if not isinstance(function_id, str) or not function_id:
            raise ValueError("function_id must be a non-empty string")
        checked = check_action(action)
        if timeout is not None and (not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0):
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
        state = self.connection.state
        if state == "shutdown":
            raise FlintInvocationError("worker_shutting_down", "the worker is shut down", function_id)
        if state == "failed":
            raise self._not_connected(function_id, self._gave_up())
        try:
            data = dumps(payload, "payload")
        except NotSerializable as err:
            raise TypeError(f"cannot send the payload of {function_id}: {err}") from None
        head: dict[str, Any] = {"type": "invokefunction", "function_id": function_id}
        ctx = context or current_invocation()
        if ctx is not None and ctx.traceparent:
            head["traceparent"] = ctx.traceparent
        if ctx is not None and ctx.baggage:
            head["baggage"] = ctx.baggage
        if checked is not None:
            head["action"] = checked
        if checked is not None and checked["type"] == "void":
            if not self.connection.send(Frame("invokefunction", _frame_text(head, data))):
                raise self._queue_full(function_id)
            return None
        invocation_id = str(uuid.uuid4())
        head["invocation_id"] = invocation_id
        limit = self.invocation_timeout if timeout is None else float(timeout)
        if timeout is not None:
            head["timeout_ms"] = max(1, round(limit * 1000))
        loop = asyncio.get_running_loop()
        p = _Pending(loop.create_future(), function_id, loop.time())
        self.pending[invocation_id] = p
        frame = Frame("invokefunction", _frame_text(head, data), invocation_id)

        def expire() -> None:
            # A call that never left the queue did not time out: it never reached the engine.
            if p.queued is not None:
                self._give_up(invocation_id)
            else:
                self._fail(invocation_id, FlintInvocationError("invocation_timeout", f"invocation of {function_id} timed out after {round(limit * 1000)} ms", function_id))

        p.timer = loop.call_later(limit, expire)
        sent = self.connection.send(frame)
        if not sent:
            self._fail(invocation_id, self._queue_full(function_id))
        elif sent == "queued":
            p.queued = frame
            p.connect_timer = loop.call_later(self.connect_timeout, self._give_up, invocation_id)
        try:
            return await p.future
        finally:
            if not p.future.done():  # the awaiting task was cancelled: nobody wants the answer any more
                self._drop(invocation_id)

    def on_result(self, msg: dict[str, Any]) -> None:
        p = self.pending.pop(str(msg.get("invocation_id")), None)
        if p is None or p.future.done():
            return
        self._stop_timers(p)
        error = msg.get("error")
        if error:
            p.future.set_exception(FlintInvocationError.from_wire(error, p.function_id))
        else:
            p.future.set_result(msg.get("result"))

    def connection_failed(self) -> None:
        """Reconnecting stopped: queued calls can never be sent, sent ones never answered."""
        for invocation_id, p in list(self.pending.items()):
            reason = self._gave_up() if p.queued else f"the call was sent but the connection was lost before its answer came; {self._gave_up()}"
            self._fail(invocation_id, self._not_connected(p.function_id, reason))

    def reject_all(self) -> None:
        for invocation_id, p in list(self.pending.items()):
            self._fail(invocation_id, FlintInvocationError("worker_shutting_down", "the worker is shutting down", p.function_id))

    # ------------------------------------------------------------------------------------- internals

    def _stop_timers(self, p: _Pending) -> None:
        if p.timer is not None:
            p.timer.cancel()
        if p.connect_timer is not None:
            p.connect_timer.cancel()

    def _drop(self, invocation_id: str) -> None:
        p = self.pending.pop(invocation_id, None)
        if p is None:
            return
        self._stop_timers(p)
        if p.queued is not None:
            self.connection.unqueue(p.queued)

    def _fail(self, invocation_id: str, err: FlintInvocationError) -> None:
        p = self.pending.get(invocation_id)
        if p is None:
            return
        self._drop(invocation_id)
        if not p.future.done():
            p.future.set_exception(err)

    def _give_up(self, invocation_id: str) -> None:
        p = self.pending.get(invocation_id)
        if p is None:
            return
        waited = round((asyncio.get_running_loop().time() - p.started) * 1000)
        problem = self.connection.problem
        self._fail(invocation_id, self._not_connected(p.function_id, f"no connection within {waited} ms" + (f" ({problem})" if problem else "")))

    def _gave_up(self) -> str:
        problem = self.connection.problem
        cause = f" ({problem})" if problem else ""
        attempts = self.connection.attempts
        if attempts == 0:
            return f"the connection failed{cause} and reconnecting is off (max_retries=0)"
        return f"gave up after {attempts} reconnect attempts{cause}"

    def _not_connected(self, function_id: str, reason: str) -> FlintInvocationError:
        return FlintInvocationError("not_connected", f"Not connected to {self.connection.shown_url}: {reason}", function_id)

    def _queue_full(self, function_id: str) -> FlintInvocationError:
        return self._not_connected(
            function_id, f"the connection is down and {self.connection.queued} frames are already queued (max_queued_frames)"
        )


def _frame_text(head: dict[str, Any], data_json: str) -> str:
    """The frame's JSON with the already-encoded payload spliced in as ``data``."""
    return json.dumps(head, separators=(",", ":"), ensure_ascii=False)[:-1] + ',"data":' + data_json + "}"
