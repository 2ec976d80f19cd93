"""Incoming invocations: each ``invokefunction`` frame runs its handler and sends one result back.

Async handlers run on the worker's event loop, sync ones in a bounded thread pool with the caller's
context (trace context, :func:`current_invocation`) copied in. At most ``max_concurrency``
invocations run at once; the others wait their turn. The payload is converted into the handler's
annotated type first; one that does not fit is answered with ``invalid_payload`` naming the field.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ._channel_sockets import ChannelSockets
from ._connection import Connection, Frame
from ._context import Caller, InvocationContext, _current
from ._convert import NotSerializable, PayloadMismatch, decode, dumps
from .channels import ChannelReader, ChannelWriter, is_channel_ref
from .errors import handler_failure

__all__ = ["FunctionEntry", "Invocations", "NO_TYPE"]

#: A handler whose input is taken as it arrives (no annotation, or no parameter at all).
NO_TYPE: Any = object()


@dataclass
class FunctionEntry:
    #: The ``registerfunction`` frame (replayed on each connect).
    message: dict[str, Any]
    #: None for an HTTP-invoked function: the engine calls its URL, never this worker.
    handler: Callable[..., Any] | None = None
    #: How many arguments the handler takes: 0, 1 (the payload) or 2 (payload, context).
    arity: int = 1
    input_type: Any = NO_TYPE
    is_async: bool = True


class Invocations:
    def __init__(
        self, connection: Connection, log: logging.Logger, max_concurrency: int, max_threads: int | None, channel_sockets: ChannelSockets
    ) -> None:
        self.connection = connection
        #: Where the channel ends in payloads get their sockets.
        self.channel_sockets = channel_sockets
        self.log = log
        self.functions: dict[str, FunctionEntry] = {}
        self.running: set[asyncio.Task[None]] = set()
        self.stopping = False
        self._slots = asyncio.Semaphore(max_concurrency)
        self._max_threads = max_threads
        self._executor: ThreadPoolExecutor | None = None

    def on_invoke(self, msg: dict[str, Any], refs: bool = True) -> None:
        """Runs the invocation ``msg``; ``refs`` False says its payload holds no channel reference."""
        function_id = msg.get("function_id")
        invocation_id = msg.get("invocation_id") or None
        if not isinstance(function_id, str):
            return
        if self.stopping:
            self._reply(msg, None, {"code": "worker_shutting_down", "message": f"the worker providing {function_id} is shutting down"})
            return
        entry = self.functions.get(function_id)
        if entry is None:
            self._reply(msg, None, {"code": "function_not_found", "message": f"Function {function_id} not found on this worker"})
            return
        if entry.handler is None:
            message = f"Function {function_id} is an HTTP function: the engine calls its URL, not this worker"
            self._reply(msg, None, {"code": "function_not_invokable", "message": message})
            return
        task = asyncio.get_running_loop().create_task(self._run(entry, msg, function_id, invocation_id, refs))
        self.running.add(task)
        task.add_done_callback(self.running.discard)

    async def drain(self, timeout: float) -> int:
        """Waits up to ``timeout`` seconds for the running handlers; returns how many are still running."""
        if self.running:
            await asyncio.wait(set(self.running), timeout=timeout)
        return len(self.running)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)

    async def _run(self, entry: FunctionEntry, msg: dict[str, Any], function_id: str, invocation_id: str | None, refs: bool) -> None:
        async with self._slots:
            caller = msg.get("caller")
            ctx = InvocationContext(
                function_id=function_id,
                invocation_id=invocation_id,
                traceparent=msg.get("traceparent") if isinstance(msg.get("traceparent"), str) else None,
                baggage=msg.get("baggage") if isinstance(msg.get("baggage"), str) else None,
                caller=Caller(caller["worker_id"], caller.get("context"))
                if isinstance(caller, dict) and isinstance(caller.get("worker_id"), str)
                else None,
            )
            _current.set(ctx)  # this task's own context: nothing outside it sees the value
            try:
                data = msg.get("data")
                if refs:
                    data = revive_channels(data, self.channel_sockets)
                arg = data if entry.input_type is NO_TYPE else decode(data, entry.input_type)
            except PayloadMismatch as err:
                self._reply(msg, None, {"code": "invalid_payload", "message": f"{function_id}: invalid payload at {err}"})
                return
            args: tuple[Any, ...] = () if entry.arity == 0 else (arg,) if entry.arity == 1 else (arg, ctx)
            handler = entry.handler
            assert handler is not None
            try:
                if entry.is_async:
                    result = await handler(*args)
                else:
                    run = contextvars.copy_context().run
                    result = await asyncio.get_running_loop().run_in_executor(self._pool(), run, handler, *args)
                    if inspect.isawaitable(result):
                        result = await result
            except asyncio.CancelledError:
                self._reply(msg, None, {"code": "worker_shutting_down", "message": f"{function_id} was cancelled: the worker is shutting down"})
                raise
            except Exception as err:
                if invocation_id is None:
                    self.log.warning("flint: %s failed: %s", function_id, err, exc_info=err)
                self._reply(msg, None, handler_failure(err, function_id))
                return
            self._reply(msg, result, None)

    def _pool(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=self._max_threads, thread_name_prefix="flint-handler")
        return self._executor

    def _reply(self, msg: dict[str, Any], result: Any, error: dict[str, Any] | None) -> None:
        invocation_id = msg.get("invocation_id")
        if not invocation_id:
            return
        function_id = msg.get("function_id")
        head: dict[str, Any] = {"type": "invocationresult", "invocation_id": invocation_id, "function_id": function_id}
        for key in ("traceparent", "baggage"):
            if isinstance(msg.get(key), str):
                head[key] = msg[key]
        if error is None:
            head["result"] = result
            try:
                text = dumps(head)
            except NotSerializable:
                try:
                    dumps(result, "result")  # says where the part with no JSON form sits
                    raise  # pragma: no cover - the head itself is plain JSON
                except NotSerializable as err:
                    del head["result"]
                    head["error"] = {"code": "result_not_serializable", "message": f"{function_id} returned a value with no JSON form: {err}"}
                    text = dumps(head)
        else:
            head["error"] = error
            text = dumps(head)
        self.connection.send(Frame("invocationresult", text, None))


def revive_channels(value: Any, sockets: ChannelSockets) -> Any:
    """Replaces every channel reference in a payload with a ChannelReader or ChannelWriter."""
    if isinstance(value, dict):
        if is_channel_ref(value):
            return ChannelReader(sockets, value) if value["direction"] == "read" else ChannelWriter(sockets, value)
        for key, item in value.items():
            if isinstance(item, (dict, list)):
                value[key] = revive_channels(item, sockets)
        return value
    if isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, (dict, list)):
                value[i] = revive_channels(item, sockets)
    return value
