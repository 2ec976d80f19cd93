"""Channels: byte streams between functions (and the body of streamed HTTP requests and responses).

A channel has a writing end and a reading end, each opened lazily as its own WebSocket on the bridge
(``/ws/channels/<id>?key=…&dir=…``, or a spare socket the worker opened ahead of need and binds to it). Bytes travel as binary frames of at most 64 KiB; text items
(``send_message``) as text frames, which readers get through ``on_message``. A normal close is the end
of the data; any other close is an error, so a reader never mistakes a failed writer for a complete one.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from . import _ws
from ._channel_sockets import ChannelSockets, channel_url
from .errors import FlintError

__all__ = ["Channel", "ChannelReader", "ChannelWriter", "channel_url", "is_channel_ref"]

MAX_CHUNK = 64 * 1024
_REF_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"channel_id": {"type": "string"}, "access_key": {"type": "string"}, "direction": {"enum": ["read", "write"]}},
    "required": ["channel_id", "access_key", "direction"],
}


def is_channel_ref(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("channel_id"), str)
        and isinstance(value.get("access_key"), str)
        and value.get("direction") in ("read", "write")
    )


class ChannelWriter:
    """The writing end: ``await write(bytes)``, ``await send_message(text)``, ``await close()``.

    Once the channel is closed (by this end, or because the reader went away) ``closed`` is True and
    every write raises :class:`FlintError` with code ``channel_closed``.
    """

    def __init__(self, base: str | ChannelSockets, ref: dict[str, str], *, label: str | None = None) -> None:
        """``base``: the bridge URL (a new socket for this end), or the worker's channel sockets."""
        self.ref = ref
        self._sockets = ChannelSockets(base) if isinstance(base, str) else base
        self._label = label or f"channel {ref['channel_id']}"
        self._ws: Any = None
        self._opening: asyncio.Future[Any] | None = None
        self._why: str | None = None
        self._closing = False
        self._listeners: list[Callable[[], Any]] = []
        self._lock = asyncio.Lock()

    @classmethod
    def __flint_schema__(cls) -> dict[str, Any]:
        return dict(_REF_SCHEMA)

    @property
    def closed(self) -> bool:
        return self._why is not None

    def on_close(self, listener: Callable[[], Any]) -> None:
        """Calls ``listener`` once when the channel closes (soon, if it already is); opens the socket to notice."""
        if self._why is not None:
            asyncio.get_running_loop().call_soon(listener)
            return
        self._listeners.append(listener)
        self._watch()

    async def write(self, data: bytes | bytearray | memoryview | str) -> None:
        """Sends bytes (text is sent as its UTF-8 bytes), in frames of at most 64 KiB."""
        raw = data.encode() if isinstance(data, str) else bytes(data)
        async with self._lock:
            ws = await self._socket()
            for offset in range(0, len(raw), MAX_CHUNK):
                await self._send(ws, raw[offset : offset + MAX_CHUNK])

    async def send_message(self, text: str) -> None:
        """Sends one text item (the reader's ``on_message`` gets it)."""
        async with self._lock:
            ws = await self._socket()
            await self._send(ws, text)

    async def close(self) -> None:
        """Ends the channel normally: the reader sees the end of the data after everything written."""
        await self._finish(1000, "stream_complete")

    async def abort(self, reason: str = "writer failed") -> None:
        """Ends the channel as failed: the reader gets an error instead of an end."""
        await self._finish(1011, reason[:120])

    async def _finish(self, code: int, reason: str) -> None:
        async with self._lock:
            if self._why is not None:
                return
            if self._opening is None and code == 1000:
                await self._socket()  # open it, so the reader learns the (empty) data ended
            self._closing = True
            ws = self._ws
            if ws is not None:
                try:
                    await ws.close(code, reason)
                except Exception:
                    pass
            self._mark_closed("this end closed it")

    def _discard(self) -> None:
        """Closes an end that was never opened, without opening it (the engine then drops the channel)."""
        if self._opening is None:
            self._closing = True
            self._mark_closed("this end closed it")

    def _closed_error(self) -> FlintError:
        return FlintError("channel_closed", f"{self._label} is closed: {self._why or 'this end closed it'}")

    async def _send(self, ws: Any, data: bytes | str) -> None:
        if self._why is not None:
            raise self._closed_error()
        try:
            await ws.send(data)
        except _ws.ConnectionClosed:
            if not self._closing:
                self._mark_closed("the other end went away")
            raise self._closed_error() from None

    def _watch(self) -> None:
        task = asyncio.get_running_loop().create_task(self._socket())
        task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)

    async def _socket(self) -> Any:
        if self._why is not None:
            raise self._closed_error()
        if self._opening is None:
            self._opening = asyncio.get_running_loop().create_task(self._open())
        try:
            return await asyncio.shield(self._opening)
        except FlintError:
            raise
        except Exception as err:
            raise self._closed_error() from err

    async def _open(self) -> Any:
        try:
            ws = await self._sockets.open(self.ref, MAX_CHUNK * 4)
        except Exception as err:
            self._mark_closed(f"it could not be opened ({err})")
            raise
        self._ws = ws
        asyncio.get_running_loop().create_task(self._watch_close(ws))
        return ws

    async def _watch_close(self, ws: Any) -> None:
        try:
            async for _ in ws:  # a writer gets nothing; this notices the reader going away
                pass
        except Exception:
            pass
        if not self._closing:
            self._mark_closed(f"the other end went away (code {ws.close_code})")

    def _mark_closed(self, why: str) -> None:
        if self._why is not None:
            return
        self._why = why
        listeners, self._listeners = self._listeners, []
        for listener in listeners:
            try:
                listener()
            except Exception:
                pass


class ChannelReader:
    """The reading end: ``async for chunk in reader`` yields bytes; ``read_all()`` joins them."""

    def __init__(self, base: str | ChannelSockets, ref: dict[str, str]) -> None:
        """``base``: the bridge URL (a new socket for this end), or the worker's channel sockets."""
        self.ref = ref
        self._sockets = ChannelSockets(base) if isinstance(base, str) else base
        self._ws: Any = None
        self._listeners: list[Callable[[str], Any]] = []
        self._done = False

    @classmethod
    def __flint_schema__(cls) -> dict[str, Any]:
        return dict(_REF_SCHEMA)

    def on_message(self, listener: Callable[[str], Any]) -> None:
        """Calls ``listener(text)`` for each text item the writer sends."""
        self._listeners.append(listener)

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._chunks()

    async def _chunks(self) -> AsyncIterator[bytes]:
        if self._done:
            return
        if self._ws is None:
            self._ws = await self._sockets.open(self.ref, None)
        ws = self._ws
        try:
            async for data in ws:
                if isinstance(data, str):
                    for listener in self._listeners:
                        listener(data)
                    continue
                yield bytes(data)
        except _ws.ConnectionClosed:
            pass
        self._done = True
        code = ws.close_code
        # 1000 and 1005 (no code) end the data; anything else means it is incomplete.
        if code not in (1000, 1005, None):
            reason = ws.close_reason or ""
            raise FlintError("channel_closed", f"channel {self.ref['channel_id']} failed ({code}{': ' + reason if reason else ''})")

    async def read_all(self) -> bytes:
        return b"".join([chunk async for chunk in self])

    async def close(self) -> None:
        self._done = True
        if self._ws is not None:
            await self._ws.close(1000, "channel_close")


@dataclass
class Channel:
    """A new channel (``await worker.create_channel()``): pass a ``*_ref`` in a payload to hand an end over."""

    writer: ChannelWriter
    reader: ChannelReader
    writer_ref: dict[str, str]
    reader_ref: dict[str, str]
