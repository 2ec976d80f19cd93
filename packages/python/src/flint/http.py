"""HTTP routes: the request a route's function receives, and streamed responses (``http()``).

A plain handler answers a route by returning an :class:`ApiResponse` (or a dict of the same keys).
Wrapped in :func:`http`, an async handler gets a :class:`HttpResponse` to stream the body: status and
headers first, then ``write``/``sse``, then ``close`` (done for it when it returns).
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ._context import InvocationContext
from ._convert import dumps
from .channels import ChannelReader, ChannelWriter
from .errors import FlintError

__all__ = ["ApiResponse", "HttpRequest", "HttpResponse", "format_sse", "http"]


@dataclass
class HttpRequest:
    """What an ``http`` trigger's function receives (through :func:`http`)."""

    method: str
    #: The concrete request path, e.g. ``/users/42``.
    path: str
    #: The route pattern, e.g. ``/users/:id``.
    route: str
    path_params: dict[str, str] = field(default_factory=dict)
    query_params: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    #: The parsed JSON body (None for other content types: read ``request_body``).
    body: Any = None
    #: The raw request body as a channel (for uploads and non-JSON content types).
    request_body: ChannelReader | None = None
    trigger: dict[str, Any] | None = None

    @classmethod
    def from_input(cls, data: dict[str, Any]) -> HttpRequest:
        reader = data.get("request_body")
        return cls(
            method=str(data.get("method", "")),
            path=str(data.get("path", "")),
            route=str(data.get("route", "")),
            path_params=dict(data.get("path_params") or {}),
            query_params=dict(data.get("query_params") or {}),
            headers=dict(data.get("headers") or {}),
            body=data.get("body"),
            request_body=reader if isinstance(reader, ChannelReader) else None,
            trigger=data.get("trigger") if isinstance(data.get("trigger"), dict) else None,
        )


@dataclass
class ApiResponse:
    """A whole HTTP answer: ``body`` is sent as JSON unless a ``content-type`` header is set and it is text."""

    status_code: int = 200
    headers: dict[str, str] | None = None
    body: Any = None

    @classmethod
    def __flint_schema__(cls) -> dict[str, Any]:
        return {
            "title": "ApiResponse",
            "type": "object",
            "properties": {
                "status_code": {"type": "integer", "minimum": 100, "maximum": 599},
                "headers": {"type": "object", "additionalProperties": {"type": "string"}},
                "body": {},
            },
            "required": ["status_code"],
        }

    def __flint_json__(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status_code": self.status_code}
        if self.headers:
            out["headers"] = self.headers
        if isinstance(self.body, (bytes, bytearray)):
            raise TypeError("an ApiResponse body cannot be bytes: stream binary bodies with http() and res.write()")
        if self.body is not None:
            out["body"] = self.body
        return out


def format_sse(data: Any, *, event: str | None = None, id: str | int | None = None, retry: int | None = None) -> str:
    """One Server-Sent Events frame: text is sent as it is (a ``data:`` line per line), anything else as
    JSON (dataclasses, enums, dates and the other types a result may hold included)."""
    out = ""
    if id is not None:
        out += "id: " + _one_line(str(id)) + "\n"
    if event is not None:
        out += "event: " + _one_line(event) + "\n"
    if retry is not None:
        out += f"retry: {int(retry)}\n"
    text = data if isinstance(data, str) else dumps(data, "data")
    for line in re.split(r"\r\n|\r|\n", text):
        out += f"data: {line}\n"
    return out + "\n"


def _one_line(text: str) -> str:
    return re.sub(r"[\r\n]", "", text)


class HttpResponse:
    """A streamed HTTP response. Set the status and headers before the first write.

    Once the response is closed (the client went away, the route timed out, or the handler closed it),
    ``closed`` is True and ``write``/``sse`` raise :class:`FlintError` with code ``channel_closed``.
    """

    def __init__(self, writer: ChannelWriter) -> None:
        self._writer = writer
        self._controls: list[str] = []
        self._content_type = False
        self.used = False

    def set_status(self, status_code: int) -> None:
        if not isinstance(status_code, int) or not 100 <= status_code <= 599:
            raise ValueError(f"status_code must be an integer 100-599, not {status_code!r}")
        self.used = True
        self._controls.append(json.dumps({"type": "set_status", "status_code": status_code}))

    def set_headers(self, headers: dict[str, str]) -> None:
        self.used = True
        if any(k.lower() == "content-type" for k in headers):
            self._content_type = True
        self._controls.append(json.dumps({"type": "set_headers", "headers": {str(k): str(v) for k, v in headers.items()}}))

    async def write(self, chunk: bytes | bytearray | memoryview | str) -> None:
        """Sends body bytes (text as UTF-8)."""
        self.used = True
        await self._flush()
        await self._writer.write(chunk)

    async def sse(self, data: Any, *, event: str | None = None, id: str | int | None = None, retry: int | None = None) -> None:
        """Sends one Server-Sent Event (sets ``content-type: text/event-stream`` when no content type was set)."""
        if not self._content_type:
            self.set_headers({"content-type": "text/event-stream", "cache-control": "no-cache"})
        await self.write(format_sse(data, event=event, id=id, retry=retry))

    async def close(self) -> None:
        """Ends the response (the status and headers set so far are sent if nothing was written)."""
        self.used = True
        if self._writer.closed:
            return
        await self._flush()
        await self._writer.close()

    @property
    def closed(self) -> bool:
        return self._writer.closed

    def on_close(self, listener: Callable[[], Any]) -> None:
        """Calls ``listener`` once when the response closes (e.g. the client went away)."""
        self._writer.on_close(listener)

    async def _flush(self) -> None:
        while self._controls:
            text = self._controls.pop(0)
            await self._writer.send_message(text)


HttpHandler = Callable[..., Awaitable[Any]]


def http(handler: HttpHandler) -> Callable[[dict[str, Any], InvocationContext], Awaitable[Any]]:
    """Wraps ``async def handler(req: HttpRequest, res: HttpResponse[, ctx])`` as a route's function.

    The handler may also return an :class:`ApiResponse` without touching ``res``. The response ends
    when the handler returns, if it did not close it; a handler that stops because the client went
    away (a write raised ``channel_closed``) ends normally, not as a failure.
    """
    if not inspect.iscoroutinefunction(handler):
        raise TypeError("http() wraps an async function: async def handler(req, res)")
    takes_ctx = len(inspect.signature(handler).parameters) >= 3

    async def route(data: dict[str, Any], ctx: InvocationContext) -> Any:
        writer = data.pop("response", None) if isinstance(data, dict) else None
        req = HttpRequest.from_input(data if isinstance(data, dict) else {})
        if not isinstance(writer, ChannelWriter):
            raise FlintError("invocation_failed", f"{ctx.function_id} was not called by an http trigger: there is no response to write")
        res = HttpResponse(writer)
        try:
            result = await (handler(req, res, ctx) if takes_ctx else handler(req, res))
        except FlintError as err:
            if err.code == "channel_closed" and writer.closed:
                return None  # the client went away; the handler is done
            await _fail(writer, res)
            raise
        except BaseException:
            await _fail(writer, res)
            raise
        if not res.used and result is not None:
            writer._discard()  # answered with the result: the response channel is never opened
            return result
        try:
            await res.close()
        except FlintError as err:
            if err.code != "channel_closed":
                raise
        return None

    route.__flint_http__ = True  # type: ignore[attr-defined]
    route.__name__ = getattr(handler, "__name__", "route")
    route.__doc__ = handler.__doc__
    return route


async def _fail(writer: ChannelWriter, res: HttpResponse) -> None:
    if res.used:
        await writer.abort()
    else:
        writer._discard()
