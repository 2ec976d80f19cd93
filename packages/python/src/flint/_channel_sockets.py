"""Where the channel ends of one worker get their sockets.

A WebSocket handshake takes about a millisecond, which a streamed HTTP response would otherwise add to
its time to first byte. Against an engine that takes spare sockets (``workerregistered`` says
``spare_channels: true``), the worker keeps sockets to ``/ws/spare-channel`` open ahead of need once it
has used a channel, and a channel end takes one of them with a ``bindchannel`` frame instead of opening
its own. The pool grows by one (up to four) each time a channel finds it empty. Spares unused for half the
time the engine keeps one unbound (``spare_channel_idle_ms``, a minute by default) are closed by the
worker itself, which then keeps none until a channel is used again: it never binds a spare the engine
is just closing. The pool is dropped when the connection ends.
"""

from __future__ import annotations

import asyncio
import json
import urllib.parse
from typing import Any

from . import _ws

__all__ = ["ChannelSockets", "channel_url"]

SPARE_PATH = "/ws/spare-channel"
MAX_SPARES = 4
SPARE_IDLE_CLOSE = 4000
DEFAULT_IDLE_MS = 60_000


def channel_url(base: str, ref: dict[str, str]) -> str:
    """The URL of a channel end: the bridge URL's scheme, host and path, its query (a token) dropped."""
    parts = urllib.parse.urlsplit(base)
    path = parts.path.rstrip("/")
    query = urllib.parse.urlencode({"key": ref["access_key"], "dir": ref["direction"]}, quote_via=urllib.parse.quote)
    channel = urllib.parse.quote(ref["channel_id"], safe="")
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, f"{path}/ws/channels/{channel}", query, ""))


def spare_url(base: str) -> str:
    """The URL of a spare socket: the bridge URL's path and query (a token) kept."""
    parts = urllib.parse.urlsplit(base)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/") + SPARE_PATH, parts.query, ""))


class ChannelSockets:
    """Opens channel ends' sockets; keeps spares when the engine takes them (see the module's text)."""

    def __init__(self, base: str, headers: dict[str, str] | None = None) -> None:
        self._base = base
        self._headers = headers
        self._enabled = False
        self._closed = False
        self._wanted = 0
        #: Spares, opening (a task) or open (the connection), each with the task watching it.
        self._opening: set[asyncio.Task[Any]] = set()
        self._open: dict[Any, asyncio.Task[None]] = {}
        self._refill_due = False
        self._retire_after = DEFAULT_IDLE_MS / 2000
        self._retire: asyncio.TimerHandle | None = None

    def set_enabled(self, enabled: bool, idle_ms: float | None = None) -> None:
        """Whether the engine of the current connection takes spare sockets, and how long it keeps one
        unbound (both told by ``workerregistered``)."""
        self._enabled = enabled and not self._closed
        self._retire_after = (idle_ms if idle_ms is not None else DEFAULT_IDLE_MS) / 2000
        if self._enabled:
            self._refill()
        else:
            self._drop()

    async def open(self, ref: dict[str, str], max_size: int | None) -> Any:
        """An open socket serving ``ref``: a spare bound to it, or a new one."""
        spare = self._take()
        if self._enabled:
            self._arm_retire()
            if spare is None:
                self._wanted = min(MAX_SPARES, self._wanted + 1)
            if not self._refill_due:
                # Opening a socket costs this process some time: not before the channel's first bytes left.
                self._refill_due = True
                asyncio.get_running_loop().call_soon(self._scheduled_refill)
        if spare is None:
            return await _ws.connect(channel_url(self._base, ref), ping_interval=None, max_size=max_size)
        bind = {"type": "bindchannel", "channel_id": ref["channel_id"], "access_key": ref["access_key"], "direction": ref["direction"]}
        await spare.send(json.dumps(bind))
        return spare

    def close(self) -> None:
        """Closes the spares and opens no more (the worker shuts down)."""
        self._closed = True
        self._enabled = False
        self._drop()

    def _arm_retire(self) -> None:
        """From this channel on, spares live until ``_retire_after`` seconds pass without one."""
        if self._retire is not None:
            self._retire.cancel()
        self._retire = asyncio.get_running_loop().call_later(self._retire_after, self._retire_all)

    def _retire_all(self) -> None:
        self._retire = None
        self._wanted = 0
        self._drop()

    def _take(self) -> Any:
        for ws, watcher in list(self._open.items()):
            del self._open[ws]
            watcher.cancel()
            if _is_open(ws):
                return ws
        return None

    def _scheduled_refill(self) -> None:
        self._refill_due = False
        if self._enabled:
            self._refill()

    def _refill(self) -> None:
        loop = asyncio.get_running_loop()
        while len(self._opening) + len(self._open) < self._wanted:
            task = loop.create_task(self._open_spare())
            self._opening.add(task)
            task.add_done_callback(self._opening.discard)

    async def _open_spare(self) -> None:
        try:
            # No size limit: a spare may become a reader of any channel.
            ws = await _ws.connect(spare_url(self._base), headers=self._headers, ping_interval=None, max_size=None)
        except Exception:
            return  # replaced when the next channel needs a socket
        if not self._enabled:
            await _close_quietly(ws)
            return
        self._open[ws] = asyncio.get_running_loop().create_task(self._watch(ws))

    async def _watch(self, ws: Any) -> None:
        """Notices an idle spare closing (the engine's idle limit, or the engine going away)."""
        await ws.wait_closed()
        self._open.pop(ws, None)
        if ws.close_code == SPARE_IDLE_CLOSE:
            self._wanted = 0

    def _drop(self) -> None:
        if not self._enabled and self._retire is not None:
            self._retire.cancel()
            self._retire = None
        for task in list(self._opening):
            task.cancel()
        for ws, watcher in list(self._open.items()):
            watcher.cancel()
            asyncio.get_running_loop().create_task(_close_quietly(ws))
        self._open.clear()


def _is_open(ws: Any) -> bool:
    close_code = getattr(ws, "close_code", None)
    return close_code is None


async def _close_quietly(ws: Any) -> None:
    try:
        await ws.close(1000, "spare not needed")
    except Exception:
        pass
