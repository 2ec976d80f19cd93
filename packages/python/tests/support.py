"""Helpers for the tests: workers with fast reconnects, waiting, plain HTTP requests."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import flint


def unique(prefix: str) -> str:
    """A function id no other test uses (the tests share one engine)."""
    return f"{prefix}::{uuid.uuid4().hex[:8]}"


async def connect(url: str, **options: Any) -> flint.Worker:
    options.setdefault("name", unique("py-test"))
    options.setdefault("reconnect", flint.ReconnectOptions(initial_delay=0.05, max_delay=0.2))
    return await flint.connect(url, **options)


async def wait_for(predicate: Callable[[], Any | Awaitable[Any]], timeout: float = 5.0, what: str = "condition") -> Any:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = predicate()
        if asyncio.iscoroutine(value) or isinstance(value, asyncio.Future):
            value = await value
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.02)


async def provided(worker: flint.Worker, function_id: str) -> dict[str, Any]:
    """Waits until the engine lists ``function_id``; returns its listing."""

    async def find() -> Any:
        listing = await worker.trigger("engine::functions::list", {})
        return next((f for f in listing["functions"] if f["function_id"] == function_id), None)

    found: dict[str, Any] = await wait_for(find, what=f"{function_id} to be listed")
    return found


def request(method: str, url: str, body: Any = None, headers: dict[str, str] | None = None, timeout: float = 10) -> tuple[int, dict[str, str], bytes]:
    """A plain HTTP request (blocking; run it in a thread): status, headers, body."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"content-type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as res:
            return res.status, {k.lower(): v for k, v in res.headers.items()}, res.read()
    except urllib.error.HTTPError as err:
        return err.code, {k.lower(): v for k, v in err.headers.items()}, err.read()
