"""The one place that knows which ``websockets`` API is installed (Debian ships 10.4; PyPI has 15+).

From 13.0 on, ``websockets.asyncio.client`` is the maintained client (``additional_headers``); before,
the legacy client (``extra_headers``). Both give connections with ``send``, ``recv``, ``close``,
``close_code``, ``close_reason`` and ``async for``.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

import websockets
import websockets.exceptions as wse

try:
    _new_connect: Any = importlib.import_module("websockets.asyncio.client").connect  # websockets >= 13
    _NEW = True
except ImportError:  # websockets 10 to 12
    _NEW = False
    _legacy_connect: Any = importlib.import_module("websockets.legacy.client").connect

__all__ = ["ConnectionClosed", "Refused", "connect", "refusal", "version"]

ConnectionClosed = wse.ConnectionClosed
version: str = getattr(websockets, "__version__", "unknown")


class Refused(Exception):
    """The server answered the upgrade with a plain HTTP response."""

    def __init__(self, status: int, code: str | None, reason: str | None) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.code = code
        self.reason = reason


def connect(
    url: str,
    *,
    headers: dict[str, str] | None = None,
    max_size: int | None = None,
    ping_interval: float | None = 20,
    ping_timeout: float | None = 20,
    open_timeout: float | None = 10,
) -> Any:
    """An awaitable of an open connection (no compression: the engine does not need it)."""
    options: dict[str, Any] = {
        "compression": None,
        "max_size": max_size,
        "ping_interval": ping_interval,
        "ping_timeout": ping_timeout,
        "open_timeout": open_timeout,
        "close_timeout": 2,
    }
    if _NEW:
        return _new_connect(url, additional_headers=headers or None, **options)
    return _legacy_connect(url, extra_headers=headers or None, **options)


def refusal(err: BaseException) -> Refused | None:
    """The plain HTTP answer an upgrade got, if that is why it failed (the engine's carry ``{error, code}``)."""
    status: int | None = None
    body: bytes | None = None
    response = getattr(err, "response", None)
    if response is not None and isinstance(getattr(response, "status_code", None), int):
        status = response.status_code
        body = getattr(response, "body", None)
    elif isinstance(getattr(err, "status_code", None), int):
        status = err.status_code  # type: ignore[attr-defined]
    if status is None:
        return None
    code = reason = None
    if body:
        try:
            parsed = json.loads(body)
            if isinstance(parsed, dict):
                code = parsed.get("code") if isinstance(parsed.get("code"), str) else None
                reason = parsed.get("error") if isinstance(parsed.get("error"), str) else None
        except ValueError:
            pass
    return Refused(status, code, reason)
