"""The worker: a connection to a Flint engine that registers functions and triggers and calls functions.

``worker = await flint.connect(name="orders")`` (or ``async with flint.connect(...) as worker:``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import json
import logging
import os
import platform
import signal
import socket
import uuid
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from ._calls import Calls
from ._channel_sockets import ChannelSockets
from ._context import InvocationContext, current_invocation
from ._connection import Connection, ConnectionOptions, Frame, ReconnectOptions
from ._convert import NotSerializable, dumps
from ._invocations import NO_TYPE, FunctionEntry, Invocations
from ._schema import UnsupportedType, json_schema
from ._types import type_hints
from .channels import Channel, ChannelReader, ChannelWriter
from .errors import FORBIDDEN, FlintError, FlintForbiddenError, FlintInvocationError
from .queue import QueueClient
from .state import StateClient
from .triggers import TriggerEntry, TriggerRef, Triggers, TriggerStatus, TriggerTypeEntry, TriggerTypeHandler, TriggerTypeRef

__all__ = ["DEFAULT_URL", "SDK_VERSION", "AUTO", "FunctionRef", "HttpInvocation", "Worker", "connect"]

SDK_VERSION = "0.1.0"
DEFAULT_URL = "ws://127.0.0.1:49134"

F = TypeVar("F", bound=Callable[..., Any])


class _Auto:
    def __repr__(self) -> str:
        return "AUTO"


#: The default of ``request_format``/``response_format``: made from the handler's annotations.
AUTO: Any = _Auto()


@dataclass(frozen=True)
class HttpInvocation:
    """A function the engine runs by calling an HTTP endpoint (needs its ``flint-http-functions`` module)."""

    url: str
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = "POST"
    timeout_ms: int | None = None
    headers: dict[str, str] | None = None
    #: ``{"type": "hmac", "secret_key": ENV}``, ``{"type": "bearer", "token_key": ENV}`` or ``{"type": "api_key", "header": H, "value_key": ENV}``.
    auth: dict[str, str] | None = None


@dataclass
class FunctionRef:
    id: str
    _worker: Worker

    def unregister(self) -> None:
        """Removes the function from the engine (and from the replay on reconnect)."""
        self._worker._unregister_function(self.id)


class Worker:
    """A connection to a Flint engine. Make one with :func:`connect`."""

    def __init__(
        self,
        url: str | None = None,
        *,
        name: str | None = None,
        token: str | None = None,
        headers: dict[str, str] | None = None,
        invocation_timeout: float = 30.0,
        connect_timeout: float = 10.0,
        reconnect: ReconnectOptions | None = None,
        max_concurrency: int = 1024,
        max_threads: int | None = None,
        max_queued_frames: int = 10_000,
        max_frame_bytes: int | None = 64 * 1024 * 1024,
        ping_interval: float | None = 20.0,
        announce: bool = True,
        log: logging.Logger | None = None,
    ) -> None:
        self._loop = asyncio.get_running_loop()
        self.url = url or os.environ.get("FLINT_URL") or DEFAULT_URL
        self.name = name or f"{socket.gethostname()}:{os.getpid()}"
        #: The id the engine gave the current connection (None until it says).
        self.worker_id: str | None = None
        self.log = log or logging.getLogger("flint")
        self._announce = announce
        token = token if token is not None else (os.environ.get("FLINT_TOKEN") or None)
        all_headers = dict(headers or {})
        if token is not None:
            all_headers["authorization"] = f"Bearer {token}"
        self.connection = Connection(
            self.url,
            ConnectionOptions(
                reconnect=reconnect or ReconnectOptions(),
                headers=all_headers,
                sends_token=token is not None or "token=" in self.url,
                max_queued_frames=max_queued_frames,
                max_frame_bytes=max_frame_bytes,
                ping_interval=ping_interval,
                open_timeout=connect_timeout,
            ),
            self,
            self.log,
        )
        self._calls = Calls(self.connection, invocation_timeout, connect_timeout)
        self._channel_sockets = ChannelSockets(self.url, all_headers)
        self._invocations = Invocations(self.connection, self.log, max_concurrency, max_threads, self._channel_sockets)
        self._triggers = Triggers(self.connection, self.log)
        self._services: dict[str, dict[str, Any]] = {}
        self._connected = asyncio.Event()
        self._stopped = asyncio.Event()
        self._listeners: dict[str, list[Callable[..., Any]]] = {}
        self._triggers.on_rejected = lambda err: self._emit("trigger_error", err)
        self.state = StateClient(self)
        self.queue = QueueClient(self)

    # ------------------------------------------------------------------------------ life cycle

    def start(self) -> None:
        """Starts connecting (``connect()`` does this); reconnects until ``shutdown()``."""
        self.connection.start()

    @property
    def connected(self) -> bool:
        return self.connection.state == "connected"

    @property
    def connection_state(self) -> str:
        """``connecting``, ``connected``, ``disconnected``, ``failed`` or ``shutdown``."""
        return self.connection.state

    @property
    def connection_problem(self) -> str | None:
        """Why the last attempt to connect failed; None once connected."""
        return self.connection.problem

    async def wait_connected(self, timeout: float | None = None) -> None:
        """Returns once connected; raises FlintInvocationError ``not_connected`` after ``timeout`` seconds."""
        if self.connected:
            return
        try:
            await asyncio.wait_for(self._connected.wait(), timeout)
        except asyncio.TimeoutError:
            reason = f"no connection within {timeout} s" + (f" ({self.connection.problem})" if self.connection.problem else "")
            raise FlintInvocationError("not_connected", f"Not connected to {self.connection.shown_url}: {reason}") from None

    def on(self, event: str, listener: Callable[..., Any]) -> None:
        """Listens to ``connected``, ``disconnected``, ``failed``, ``trigger_error`` (TriggerRegistrationError)
        or ``engine_error`` (FlintError: a frame the engine refused, e.g. a reserved function id)."""
        self._listeners.setdefault(event, []).append(listener)

    async def shutdown(self, grace: float = 10.0) -> None:
        """Stops taking invocations, lets running handlers finish (up to ``grace`` seconds, then
        cancels them), rejects pending calls with ``worker_shutting_down`` and closes the connection."""
        if self.connection.state == "shutdown":
            await self._stopped.wait()
            return
        self._invocations.stopping = True
        left = await self._invocations.drain(grace)
        if left:
            self.log.warning("flint: %d handlers still running after %s s; cancelling them", left, grace)
            for task in list(self._invocations.running):
                task.cancel()
            await self._invocations.drain(1.0)
        self._calls.reject_all()
        self._channel_sockets.close()
        for entry in self._triggers.registered.values():
            if not entry.ready.done():
                entry.ready.cancel()  # no answer can come any more
        await self.connection.close()
        self._invocations.close()
        self._stopped.set()

    async def serve_forever(self) -> None:
        """Runs until SIGINT or SIGTERM (or ``shutdown()``), then shuts down gracefully."""
        loop = asyncio.get_running_loop()
        installed: list[signal.Signals] = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, lambda: loop.create_task(self.shutdown()))
                installed.append(sig)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or Windows
                pass
        try:
            await self._stopped.wait()
        finally:
            for sig in installed:
                loop.remove_signal_handler(sig)

    async def __aenter__(self) -> Worker:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.shutdown()

    # ------------------------------------------------------------------------------ functions

    def function(
        self,
        function_id: str,
        *,
        description: str | None = None,
        request_format: Any = AUTO,
        response_format: Any = AUTO,
        metadata: dict[str, Any] | None = None,
    ) -> Callable[[F], F]:
        """Registers the decorated function (sync or async) under ``function_id``; returns it unchanged."""

        def decorate(fn: F) -> F:
            self.register_function(
                function_id, fn, description=description, request_format=request_format, response_format=response_format, metadata=metadata
            )
            return fn

        return decorate

    def register_function(
        self,
        function_id: str,
        handler: Callable[..., Any] | HttpInvocation,
        *,
        description: str | None = None,
        request_format: Any = AUTO,
        response_format: Any = AUTO,
        metadata: dict[str, Any] | None = None,
    ) -> FunctionRef:
        """Registers a function this worker runs (``handler``) or the engine runs by calling a URL.

        ``request_format``/``response_format`` default to JSON Schemas made from the handler's first
        parameter and return annotations; pass a dict to set one, or None to send none. The handler
        gets its payload converted into the annotated type, and optionally the InvocationContext as
        a second argument. It is registered again on every reconnect.
        """
        if not isinstance(function_id, str) or not function_id.strip():
            raise ValueError("function id must be a non-empty string")
        if function_id in self._invocations.functions:
            raise ValueError(f"function {function_id} is already registered on this worker")
        message: dict[str, Any] = {"type": "registerfunction", "id": function_id}
        if description is not None:
            message["description"] = description
        if metadata is not None:
            message["metadata"] = metadata
        if isinstance(handler, HttpInvocation):
            if not handler.url:
                raise ValueError(f"function {function_id}: an HttpInvocation needs a url")
            invocation = {k: v for k, v in vars(handler).items() if v is not None}
            message["invocation"] = invocation
            for key, value in (("request_format", request_format), ("response_format", response_format)):
                if isinstance(value, dict):
                    message[key] = value
            entry = FunctionEntry(message)
        elif callable(handler):
            entry = _describe_handler(function_id, handler, message, request_format, response_format)
        else:
            raise TypeError(f"function {function_id}: the handler must be a function or an HttpInvocation, not {type(handler).__name__}")
        self._invocations.functions[function_id] = entry
        self.connection.send_now(Frame("registerfunction", dumps(message)))
        return FunctionRef(function_id, self)

    def _unregister_function(self, function_id: str) -> None:
        if self._invocations.functions.pop(function_id, None) is not None:
            self.connection.send_now(Frame("unregisterfunction", dumps({"type": "unregisterfunction", "id": function_id})))

    @property
    def functions(self) -> dict[str, dict[str, Any]]:
        """The registration of each function of this worker (as sent to the engine), by id."""
        return {fid: dict(entry.message) for fid, entry in self._invocations.functions.items()}

    # ------------------------------------------------------------------------------ triggers

    def register_trigger(self, type: str, function_id: str, config: Any = None, *, metadata: dict[str, Any] | None = None) -> TriggerRef:
        """Registers a trigger; ``await ref.ready`` says whether the engine accepted it."""
        if not isinstance(type, str) or not type:
            raise ValueError("trigger type must be a non-empty string")
        if not isinstance(function_id, str) or not function_id:
            raise ValueError("function_id must be a non-empty string")
        trigger_id = str(uuid.uuid4())
        message: dict[str, Any] = {"type": "registertrigger", "id": trigger_id, "trigger_type": type, "function_id": function_id, "config": config}
        if metadata is not None:
            message["metadata"] = metadata
        text = dumps(message)  # refuses an unserialisable config here, not at the next reconnect
        ready: asyncio.Future[TriggerStatus] = self._loop.create_future()
        ready.add_done_callback(_retrieve)
        self._triggers.registered[trigger_id] = TriggerEntry(message, ready)
        self.connection.send_now(Frame("registertrigger", text))

        def unregister() -> None:
            if self._triggers.registered.pop(trigger_id, None) is not None:
                self.connection.send(Frame("unregistertrigger", dumps({"type": "unregistertrigger", "id": trigger_id, "trigger_type": type})))
                if not ready.done():
                    ready.cancel()

        return TriggerRef(trigger_id, ready, unregister)

    def register_trigger_type(self, id: str, description: str, handler: TriggerTypeHandler) -> TriggerTypeRef:
        """Provides a trigger type: the engine forwards triggers of that type to ``handler``."""
        message = {"type": "registertriggertype", "id": id, "description": description}
        self._triggers.types[id] = TriggerTypeEntry(message, handler)
        self.connection.send_now(Frame("registertriggertype", dumps(message)))

        def unregister() -> None:
            if self._triggers.types.pop(id, None) is not None:
                self.connection.send_now(Frame("unregistertriggertype", dumps({"type": "unregistertriggertype", "id": id})))

        return TriggerTypeRef(id, unregister)

    def register_service(self, id: str, *, name: str | None = None, description: str | None = None, parent_service_id: str | None = None) -> None:
        """Describes a service (a group of functions) for consoles; purely descriptive."""
        message: dict[str, Any] = {"type": "registerservice", "id": id, "name": name or id}
        if description is not None:
            message["description"] = description
        if parent_service_id is not None:
            message["parent_service_id"] = parent_service_id
        self._services[id] = message
        self.connection.send_now(Frame("registerservice", dumps(message)))

    # ------------------------------------------------------------------------------ calls

    async def trigger(self, function_id: str, payload: Any = None, *, action: Any = None, timeout: float | None = None) -> Any:
        """Calls a function on any worker and returns its result.

        ``action=TriggerAction.void()`` returns None at once; ``TriggerAction.enqueue(queue)`` returns
        ``{"messageReceiptId": …}`` once the call is queued. ``timeout`` is in seconds (default
        ``invocation_timeout``). Failures raise FlintInvocationError with the protocol's code.
        """
        return await self._calls.trigger(function_id, payload, action, timeout)

    def trigger_sync(self, function_id: str, payload: Any = None, *, action: Any = None, timeout: float | None = None) -> Any:
        """``trigger`` for code running in another thread (a sync handler): blocks until the result."""
        if _running_loop() is self._loop:
            raise RuntimeError("trigger_sync() would block the worker's event loop: use `await worker.trigger(...)` here")
        # The invocation goes along explicitly (the trace context of nested calls), whatever context the loop runs the call in.
        call = self._calls.trigger(function_id, payload, action, timeout, current_invocation())
        future = asyncio.run_coroutine_threadsafe(call, self._loop)
        limit = (timeout if timeout is not None else self._calls.invocation_timeout) + self._calls.connect_timeout + 5
        try:
            return future.result(limit)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise FlintInvocationError("invocation_timeout", f"invocation of {function_id} got no answer within {limit} s", function_id) from None

    async def create_channel(self, buffer_size: int | None = None) -> Channel:
        """Creates a channel; pass ``reader_ref``/``writer_ref`` in a payload to hand an end to another function."""
        refs = await self.trigger("engine::channels::create", {} if buffer_size is None else {"buffer_size": buffer_size})
        return Channel(
            writer=ChannelWriter(self._channel_sockets, refs["writer"]),
            reader=ChannelReader(self._channel_sockets, refs["reader"]),
            writer_ref=refs["writer"],
            reader_ref=refs["reader"],
        )

    def _fire(self, function_id: str, payload: dict[str, Any], ctx: InvocationContext | None = None) -> None:
        """A void call from synchronous code (the log handler), in ``ctx``'s trace context; never raises."""
        try:
            text = dumps(payload)
        except NotSerializable:
            payload = json.loads(json.dumps(payload, default=repr))
            text = dumps(payload)
        frame: dict[str, Any] = {"type": "invokefunction", "function_id": function_id, "action": {"type": "void"}}
        if ctx is not None and ctx.traceparent:
            frame["traceparent"] = ctx.traceparent
        if ctx is not None and ctx.baggage:
            frame["baggage"] = ctx.baggage
        head = json.dumps(frame)
        self.connection.send(Frame("invokefunction", head[:-1] + ',"data":' + text + "}"))

    # ------------------------------------------------------------------------------ ConnectionHost

    def replay(self) -> None:
        for t in self._triggers.types.values():
            self.connection.send_now(Frame("registertriggertype", dumps(t.message)))
        for s in self._services.values():
            self.connection.send_now(Frame("registerservice", dumps(s)))
        for f in self._invocations.functions.values():
            self.connection.send_now(Frame("registerfunction", dumps(f.message)))
        for r in self._triggers.registered.values():
            self.connection.send_now(Frame("registertrigger", dumps(r.message)))

    def sending(self, invocation_id: str) -> bool:
        return self._calls.sending(invocation_id)

    def opened(self) -> None:
        if self._announce:
            self._fire(
                "engine::workers::register",
                {
                    "runtime": "python",
                    "version": SDK_VERSION,
                    "name": self.name,
                    "os": f"{platform.system()} {platform.release()} ({platform.machine()})",
                    "pid": os.getpid(),
                    "isolation": os.environ.get("FLINT_ISOLATION") or None,
                    "telemetry": {"language": "python", "framework": "flint-py", "project_name": os.path.basename(os.getcwd())},
                },
            )
        self._connected.set()
        self._emit("connected")

    def disconnected(self) -> None:
        self._connected.clear()
        # Spares belong to the engine of the connection that just ended.
        self._channel_sockets.set_enabled(False)
        self.worker_id = None
        self._emit("disconnected")

    def failed(self) -> None:
        self._connected.clear()
        self._calls.connection_failed()
        self._emit("failed")

    def message(self, data: str | bytes) -> None:
        """One frame from the engine; a bad one is logged and dropped, never fatal."""
        try:
            msg = json.loads(data)
        except ValueError as err:
            self.log.warning("flint: dropped an undecodable frame from the engine: %s", err)
            return
        if not isinstance(msg, dict):
            self.log.warning("flint: dropped a frame that is not a JSON object")
            return
        try:
            if msg.get("type") == "invokefunction":
                # A payload without an access key holds no channel reference: no need to walk it.
                refs = "access_key" in data if isinstance(data, str) else b"access_key" in data
                self._invocations.on_invoke(msg, refs)
            else:
                self._dispatch(msg)
        except Exception:
            self.log.exception("flint: failed to handle a %s frame", msg.get("type"))

    def _dispatch(self, msg: dict[str, Any]) -> None:
        kind = msg.get("type")
        if kind == "invocationresult":
            self._calls.on_result(msg)
        elif kind == "invokefunction":
            self._invocations.on_invoke(msg)
        elif kind == "workerregistered":
            self.worker_id = msg.get("worker_id") if isinstance(msg.get("worker_id"), str) else None
            token = msg.get("reattach_token")
            if isinstance(token, str):
                self.connection.reattach_token = token
            idle = msg.get("spare_channel_idle_ms")
            self._channel_sockets.set_enabled(msg.get("spare_channels") is True, idle if isinstance(idle, (int, float)) else None)
        elif kind == "triggerregistrationresult":
            self._triggers.on_result(msg)
        elif kind in ("registertrigger", "unregistertrigger"):
            self._triggers.on_forwarded(msg)
        elif kind == "error":
            raw = msg.get("error")
            body: dict[str, Any] = raw if isinstance(raw, dict) else {}
            code, text = str(body.get("code", "internal_error")), str(body.get("message", ""))
            self.log.warning("flint: the engine reported %s: %s", code, text)
            self._emit("engine_error", FlintForbiddenError(text) if code == FORBIDDEN else FlintError(code, text))
        elif kind == "ping":
            self.connection.send_now(Frame("pong", '{"type":"pong"}'))
        # anything else (a newer engine's frames) is ignored

    def _emit(self, event: str, *args: Any) -> None:
        for listener in self._listeners.get(event, []):
            try:
                listener(*args)
            except Exception:
                self.log.exception("flint: a %s listener failed", event)


def _describe_handler(function_id: str, handler: Callable[..., Any], message: dict[str, Any], request_format: Any, response_format: Any) -> FunctionEntry:
    """The entry of a handler: how many arguments it takes, its input type, and its formats."""
    try:
        params = [
            p
            for p in inspect.signature(handler).parameters.values()
            if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        ]
        has_varargs = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in inspect.signature(handler).parameters.values())
    except (TypeError, ValueError):
        params, has_varargs = [], True
    arity = 2 if has_varargs else min(len(params), 2)
    is_http = getattr(handler, "__flint_http__", False)
    input_type: Any = NO_TYPE
    hints: dict[str, Any] = {}
    if not is_http:
        try:
            hints = type_hints(handler)
        except TypeError:
            hints = {}  # a callable object or a functools.partial: nothing to read types from
        except Exception as err:
            if request_format is not AUTO and response_format is not AUTO:
                hints = {}  # both formats given: the payload is passed as it arrives
            else:
                raise TypeError(
                    f"function {function_id}: cannot resolve the annotations of {getattr(handler, '__qualname__', handler)!r} ({err}); "
                    "define or import the types they name at module level, or pass both request_format and response_format "
                    "(the payload then arrives as plain JSON)"
                ) from err
        if params and params[0].name in hints:
            input_type = hints[params[0].name]
    for key, explicit, source in (("request_format", request_format, input_type), ("response_format", response_format, hints.get("return", NO_TYPE))):
        if explicit is AUTO:
            if source is NO_TYPE or is_http:
                continue
            try:
                message[key] = json_schema(source, "validation" if key == "request_format" else "serialization")
            except UnsupportedType as err:
                raise TypeError(f"function {function_id}: {err}; pass {key} explicitly (a dict, or None for none)") from None
        elif isinstance(explicit, dict):
            message[key] = explicit
        elif explicit is not None:
            raise TypeError(f"function {function_id}: {key} must be a dict (a JSON Schema), None or left out")
    is_async = inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(getattr(handler, "__call__", None))
    return FunctionEntry(message, handler, arity, input_type, is_async)


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Marks a ready future's failure as seen (it is also logged), so asyncio does not complain of it."""
    if not future.cancelled():
        future.exception()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class _Connecting:
    """What :func:`connect` returns: await it for a connected Worker, or use it with ``async with``."""

    def __init__(self, kwargs: dict[str, Any]) -> None:
        self._kwargs = kwargs
        self._worker: Worker | None = None

    def __await__(self) -> Generator[Any, None, Worker]:
        return self._open().__await__()

    async def _open(self) -> Worker:
        wait = self._kwargs.pop("wait", True)
        worker = Worker(**self._kwargs)
        worker.start()
        if wait:
            try:
                await worker.wait_connected(worker._calls.connect_timeout)
            except FlintInvocationError:
                await worker.shutdown(grace=0)
                raise
        self._worker = worker
        return worker

    async def __aenter__(self) -> Worker:
        return await self._open()

    async def __aexit__(self, *exc: object) -> None:
        if self._worker is not None:
            await self._worker.shutdown()


def connect(url: str | None = None, *, name: str | None = None, wait: bool = True, **options: Any) -> _Connecting:
    """Connects a worker to the engine at ``url`` (default ``FLINT_URL``, then ``ws://127.0.0.1:49134``).

    ``await flint.connect(...)`` returns once the connection is open (raising FlintInvocationError
    ``not_connected`` after ``connect_timeout`` seconds, 10 by default); ``wait=False`` returns at once
    and connects in the background. The other options are :class:`Worker`'s.
    """
    return _Connecting({"url": url, "name": name, "wait": wait, **options})

