"""The WebSocket to the engine: connects and reconnects with jittered backoff, replays registrations on
every open, queues calls and results while disconnected, and writes frames in order from one task.

Unlike upstream's Python SDK, every end of a connection counts (a clean close by the engine too), every
failure to connect is retried (a refused upgrade, an error during replay), and one bad frame never
stops the reading loop.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
from collections import deque
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from . import _ws

__all__ = ["Connection", "ConnectionOptions", "Frame", "ReconnectOptions", "shown_url"]

#: Frames that wait for the next connection; registrations are replayed instead, so they are dropped.
QUEUED_TYPES = frozenset({"invokefunction", "invocationresult", "unregistertrigger", "triggerregistrationresult"})

#: The header that presents the previous connection's reattach token (the engine hands this worker's
#: triggers and pending results to the new connection at once).
REATTACH_HEADER = "x-flint-reattach"

#: A call queued while the next attempt is further away than this brings the attempt forward (at most
#: once per this interval): after a long outage the backoff may exceed how long a call waits.
EARLY_ATTEMPT_S = 1.0


@dataclass(frozen=True)
class ReconnectOptions:
    """Exponential backoff with jitter between connection attempts (seconds)."""

    initial_delay: float = 0.5
    max_delay: float = 30.0
    multiplier: float = 2.0
    #: 0..1: each delay varies by ± this fraction.
    jitter: float = 0.3
    #: -1 retries forever.
    max_retries: int = -1

    def delay(self, attempt: int, rand: float | None = None) -> float:
        """The delay before attempt ``attempt`` (0-based)."""
        base = min(self.initial_delay * self.multiplier**attempt, self.max_delay)
        r = random.random() if rand is None else rand
        return max(0.0, base * (1 + self.jitter * (2 * r - 1)))


@dataclass
class ConnectionOptions:
    reconnect: ReconnectOptions
    headers: dict[str, str]
    #: The upgrade carries the bridge token: a refusal then means a wrong token.
    sends_token: bool
    max_queued_frames: int
    max_frame_bytes: int | None
    ping_interval: float | None
    open_timeout: float


@dataclass
class Frame:
    """A frame ready to write: its type, the call it belongs to (if any) and its JSON text."""

    type: str
    text: str
    invocation_id: str | None = None


class ConnectionHost(Protocol):
    def replay(self) -> None: ...
    def sending(self, invocation_id: str) -> bool: ...
    def opened(self) -> None: ...
    def message(self, data: str | bytes) -> None: ...
    def disconnected(self) -> None: ...
    def failed(self) -> None: ...


def shown_url(url: str) -> str:
    """``url`` with the value of a ``?token=`` hidden (for messages)."""
    return re.sub(r"([?&]token=)[^&#]*", r"\1***", url)


class Connection:
    def __init__(self, url: str, options: ConnectionOptions, host: ConnectionHost, log: logging.Logger) -> None:
        self.url = url
        self.shown_url = shown_url(url)
        self.options = options
        self.host = host
        self.log = log
        #: connecting, connected, disconnected, failed or shutdown.
        self.state: str = "connecting"
        #: Why the last attempt failed; None once connected.
        self.problem: str | None = None
        self.reattach_token: str | None = None
        self.attempts = 0
        self._reported: str | None = None
        self._ws: Any = None
        self._outbox: deque[Frame] = deque()
        self._out: deque[Frame] = deque()
        self._wake = asyncio.Event()
        self._hurry = asyncio.Event()
        self._next_attempt_at = 0.0
        self._last_early = 0.0
        self._task: asyncio.Task[None] | None = None
        self._writer: asyncio.Task[None] | None = None
        self._closed_event = asyncio.Event()

    @property
    def queued(self) -> int:
        return len(self._outbox)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="flint-connection")

    def send_now(self, frame: Frame) -> None:
        """Registration frames: written when connected, else dropped (replayed on the next open)."""
        if self.state == "connected" and self._ws is not None:
            self._write(frame)

    def send(self, frame: Frame) -> Literal["sent", "queued", False]:
        """Calls and results: written when connected, else queued until the next open; False when refused."""
        if self.state == "connected" and self._ws is not None:
            self._write(frame)
            return "sent"
        if self.state == "shutdown" or frame.type not in QUEUED_TYPES:
            return False
        if len(self._outbox) >= self.options.max_queued_frames:
            return False
        self._outbox.append(frame)
        if frame.type == "invokefunction":
            self._bring_forward()
        return "queued"

    def unqueue(self, frame: Frame) -> None:
        """Takes back a queued frame (its call gave up waiting)."""
        try:
            self._outbox.remove(frame)
        except ValueError:
            pass

    async def close(self) -> None:
        """Stops reconnecting, writes what is already handed over, and closes with 1000."""
        if self.state == "shutdown":
            await self._closed_event.wait()
            return
        self.state = "shutdown"
        self._outbox.clear()
        self._hurry.set()
        ws = self._ws
        if ws is not None:
            try:
                await asyncio.wait_for(self._drained(), 1.0)
            except asyncio.TimeoutError:
                pass
            try:
                await asyncio.wait_for(ws.close(1000, "worker shutdown"), 2.0)
            except (asyncio.TimeoutError, OSError, _ws.ConnectionClosed):
                pass
        if self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), 2.0)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                self._task.cancel()
        self._closed_event.set()

    async def _drained(self) -> None:
        while self._out and self._writer is not None and not self._writer.done():
            await asyncio.sleep(0.005)

    # ------------------------------------------------------------------------------------- internals

    def _write(self, frame: Frame) -> None:
        self._out.append(frame)
        self._wake.set()

    async def _write_loop(self, ws: Any) -> None:
        out = self._out
        while True:
            await self._wake.wait()
            self._wake.clear()
            while out:
                frame = out[0]
                await ws.send(frame.text)
                out.popleft()

    def _bring_forward(self) -> None:
        if self.state != "disconnected":
            return
        now = asyncio.get_running_loop().time()
        if self._next_attempt_at - now <= EARLY_ATTEMPT_S or now - self._last_early < EARLY_ATTEMPT_S:
            return
        self._last_early = now
        self._hurry.set()

    async def _run(self) -> None:
        while self.state != "shutdown":
            self.state = "connecting"
            headers = dict(self.options.headers)
            if self.reattach_token is not None:
                headers[REATTACH_HEADER] = self.reattach_token
            try:
                ws = await _ws.connect(
                    self.url,
                    headers=headers,
                    max_size=self.options.max_frame_bytes,
                    ping_interval=self.options.ping_interval,
                    ping_timeout=self.options.ping_interval,
                    open_timeout=self.options.open_timeout,
                )
            except asyncio.CancelledError:
                raise
            except Exception as err:  # every failure to connect is retried
                self._attempt_failed(err)
                if not await self._backoff():
                    return
                continue
            if self.state == "shutdown":
                await ws.close(1000, "worker shutdown")
                return
            await self._serve(ws)
            if self.state == "shutdown":
                return
            self.state = "disconnected"
            self._safely(self.host.disconnected)
            if not await self._backoff():
                return

    async def _serve(self, ws: Any) -> None:
        self._ws = ws
        self.state = "connected"
        self.attempts = 0
        self.problem = None
        self._reported = None
        self._out.clear()
        self._writer = asyncio.get_running_loop().create_task(self._write_loop(ws), name="flint-writer")
        try:
            # Full replay: the engine gave this connection a new worker id and knows nothing of it yet.
            self._safely(self.host.replay)
            queued, self._outbox = self._outbox, deque()
            for frame in queued:
                if frame.type == "invokefunction" and frame.invocation_id is not None and not self.host.sending(frame.invocation_id):
                    continue
                self._write(frame)
            self._safely(self.host.opened)
            async for data in ws:
                self.host.message(data)
        except _ws.ConnectionClosed:
            pass
        except Exception as err:  # pragma: no cover - the host guards each frame
            self.log.error("flint: the connection's reading loop failed: %r", err)
        finally:
            self._ws = None
            self._writer.cancel()
            # Calls and results handed over but not written yet wait for the next connection.
            unsent = [f for f in self._out if f.type in QUEUED_TYPES]
            self._out.clear()
            self._outbox.extendleft(reversed(unsent))
            if self.state != "shutdown":
                try:
                    await ws.close()
                except Exception:
                    pass

    async def _backoff(self) -> bool:
        retries = self.options.reconnect.max_retries
        if retries >= 0 and self.attempts >= retries:
            self.state = "failed"
            if retries > 0:
                self.log.error("flint: giving up on %s after %d reconnect attempts", self.shown_url, self.attempts)
            self._safely(self.host.failed)
            return False
        if self.state != "shutdown":
            self.state = "disconnected"
        delay = self.options.reconnect.delay(self.attempts)
        self.attempts += 1
        loop = asyncio.get_running_loop()
        self._next_attempt_at = loop.time() + delay
        self._hurry.clear()
        try:
            await asyncio.wait_for(self._hurry.wait(), delay)
        except asyncio.TimeoutError:
            pass
        return self.state != "shutdown"

    def _attempt_failed(self, err: BaseException) -> None:
        refused = _ws.refusal(err)
        if refused is not None:
            if refused.status in (401, 403):
                why = "wrong or missing bridge token" if refused.status == 401 else "the engine's access policy refused this worker"
                if refused.status == 401 and not self.options.sends_token:
                    why = "the engine needs a bridge token (set FLINT_TOKEN or token=)"
                detail = f"HTTP {refused.status}: {refused.reason or why}"
            elif refused.status in (200, 404, 426):
                detail = f"HTTP {refused.status}: not a Flint bridge (is this the engine's bridge port?)"
            else:
                detail = f"HTTP {refused.status}" + (f": {refused.reason}" if refused.reason else "")
            message = f"{self.shown_url} refused the connection ({detail})"
        elif isinstance(err, (ConnectionRefusedError,)):
            message = f"cannot connect to {self.shown_url}: connection refused (is the engine running?)"
        elif isinstance(err, asyncio.TimeoutError):
            message = f"cannot connect to {self.shown_url}: no answer within {self.options.open_timeout} s"
        else:
            message = f"cannot connect to {self.shown_url}: {err.__class__.__name__}: {err}"
        self.problem = message
        if message == self._reported:
            return
        self._reported = message
        retries = self.options.reconnect.max_retries
        retrying = retries < 0 or self.attempts < retries
        self.log.warning("flint: %s%s", message, "; retrying quietly" if retrying else "")

    def _safely(self, fn: Any) -> None:
        try:
            fn()
        except Exception:
            self.log.exception("flint: %s failed", getattr(fn, "__name__", "callback"))
