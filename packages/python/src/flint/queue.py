"""A client for the queue module: publish to durable topics, subscribe to them, dead letters (``worker.queue``)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from ._clients import ClientHost, handler_with_trigger

__all__ = ["QueueClient"]


class QueueClient:
    def __init__(self, host: ClientHost) -> None:
        self._host = host

    async def publish(self, topic: str, data: Any, *, delay: float | None = None) -> None:
        """Publishes ``data`` to ``topic``: every function subscribed gets it once. Returns once it is stored."""
        payload: dict[str, Any] = {"topic": topic, "data": data}
        if delay is not None:
            payload["delay_ms"] = max(0, round(delay * 1000))
        await self._host.trigger("flint::durable::publish", payload)

    def subscribe(
        self,
        topic: str,
        handler: Callable[[Any], Any] | None = None,
        *,
        function_id: str | None = None,
        condition_function_id: str | None = None,
        queue_config: dict[str, Any] | None = None,
    ) -> Any:
        """Handles every message of ``topic`` (a function and a ``durable:subscriber`` trigger).

        ``queue_config`` takes the module's keys (``max_retries``, ``concurrency``, ``type: "fifo"``,
        ``message_group_field``, ``backoff_ms`` …). A failed handler is retried, then dead-lettered.
        Without ``handler`` it is a decorator: ``@worker.queue.subscribe("orders.created")``.
        """
        config: dict[str, Any] = {"topic": topic}
        if condition_function_id is not None:
            config["condition_function_id"] = condition_function_id
        if queue_config is not None:
            config["queue_config"] = queue_config
        fid = function_id or f"on-message::{uuid.uuid4()}"
        return handler_with_trigger(self._host, fid, handler, f"Handles messages of topic {topic}", "durable:subscriber", config)

    async def stats(self, topic: str) -> dict[str, Any]:
        """Depth, in flight, delayed, dead, unrouted, consumers and rates of a topic or named queue."""
        return await self._host.trigger("engine::queue::topic_stats", {"topic": topic})  # type: ignore[no-any-return]

    async def dead_letters(self, topic: str, *, offset: int = 0, limit: int = 50) -> list[dict[str, Any]]:
        return await self._host.trigger("engine::queue::dlq_messages", {"topic": topic, "offset": offset, "limit": limit})  # type: ignore[no-any-return]

    async def redrive(self, queue: str) -> dict[str, Any]:
        """Moves the dead letters of a topic or named queue back to be handled."""
        return await self._host.trigger("flint::queue::redrive", {"queue": queue})  # type: ignore[no-any-return]
