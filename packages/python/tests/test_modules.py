"""The module clients: state (with change triggers), queue topics, and log records with trace ids."""

from __future__ import annotations

import asyncio
import logging
import uuid

import flint
import pytest
from flint import FlintInvocationError, TriggerRegistrationError

from support import connect, unique, wait_for


async def test_state_set_get_update_list_delete(engine) -> None:
    async with await connect(engine.bridge) as worker:
        scope = f"py-{uuid.uuid4().hex[:8]}"
        assert await worker.state.get(scope, "a") is None
        assert await worker.state.set(scope, "a", {"n": 1}) == {"old_value": None, "new_value": {"n": 1}}
        updated = await worker.state.update(scope, "a", [{"type": "increment", "path": "n", "by": 2}])
        assert updated["new_value"] == {"n": 3}
        await worker.state.set(scope, "b", [1, 2])
        assert sorted(await worker.state.list(scope), key=str) == sorted([{"n": 3}, [1, 2]], key=str)
        assert scope in await worker.state.list_groups()
        assert (await worker.state.delete(scope, "a"))["old_value"] == {"n": 3}
        assert await worker.state.get(scope, "a") is None


async def test_state_change_trigger_with_the_decorator(engine) -> None:
    async with await connect(engine.bridge) as worker:
        scope = f"py-{uuid.uuid4().hex[:8]}"
        events: list[flint.StateEvent] = []

        @worker.state.on_change(scope)
        async def changed(event: flint.StateEvent) -> None:
            events.append(event)

        await asyncio.sleep(0.1)  # the trigger is registered with the function
        await worker.state.set(scope, "k", 1)
        await worker.state.set(scope, "k", 2)
        await wait_for(lambda: len(events) == 2, what="two state events")
        assert [(e["event_type"], e["old_value"], e["new_value"]) for e in events] == [
            ("state:created", None, 1),
            ("state:updated", 1, 2),
        ]


async def test_queue_publish_and_subscribe_with_retries(engine) -> None:
    async with await connect(engine.bridge) as worker:
        topic = f"py.{uuid.uuid4().hex[:8]}"
        attempts: list[dict] = []

        async def handle(data: dict) -> None:
            attempts.append(data)
            if len(attempts) == 1:
                raise RuntimeError("first attempt fails")

        sub = worker.queue.subscribe(topic, handle, queue_config={"max_retries": 2, "backoff_ms": 10})
        await sub.ready
        await worker.queue.publish(topic, {"order": 7})
        await wait_for(lambda: len(attempts) == 2, what="the retry")
        assert attempts == [{"order": 7}, {"order": 7}]
        stats = await worker.queue.stats(topic)
        assert (stats["dead"], stats["consumer_count"]) == (0, 1)


async def test_a_message_that_keeps_failing_goes_to_the_dead_letters(engine) -> None:
    async with await connect(engine.bridge) as worker:
        topic = f"py.{uuid.uuid4().hex[:8]}"

        @worker.queue.subscribe(topic, queue_config={"max_retries": 1, "backoff_ms": 10})
        async def always_fails(data: dict) -> None:
            raise flint.FlintError("payment_declined", f"card {data['card']} declined")

        await asyncio.sleep(0.1)
        await worker.queue.publish(topic, {"card": "4242"})

        async def dead() -> list:
            return await worker.queue.dead_letters(topic)

        letters = await wait_for(dead, what="the dead letter")
        assert letters[0]["payload"] == {"card": "4242"}
        assert "card 4242 declined" in letters[0]["error"]


async def test_log_records_carry_the_invocation_trace(engine) -> None:
    async with await connect(engine.bridge) as worker:
        handler = flint.LogHandler(worker)
        log = logging.getLogger(f"py-test-{uuid.uuid4().hex[:6]}")
        log.addHandler(handler)
        log.setLevel(logging.DEBUG)
        fid = unique("py::logs")
        marker = uuid.uuid4().hex

        @worker.function(fid)
        def logs(data: dict) -> str | None:  # a sync handler: the record comes from its thread
            log.warning("order %s shipped %s", data["order"], marker, extra={"carrier": "ups"})
            ctx = flint.current_invocation()
            return ctx.trace_id if ctx else None

        trace_id = await worker.trigger(fid, {"order": 7})
        assert trace_id, "calls are traced by the engine's default observability config"

        async def record() -> dict | None:
            found = await worker.trigger("engine::logs::list", {"text": marker})
            return found["logs"][0] if found["logs"] else None

        entry = await wait_for(record, what="the log record")
        assert entry["trace_id"] == trace_id
        assert entry["body"] == f"order 7 shipped {marker}"
        assert entry["severity_text"].lower() == "warn"
        log.removeHandler(handler)


async def test_trigger_registration_errors_reject_ready(engine) -> None:
    async with await connect(engine.bridge) as worker:
        fid = unique("py::nothing")
        worker.register_function(fid, lambda data: data)
        refused: list[TriggerRegistrationError] = []
        worker.on("trigger_error", refused.append)
        ref = worker.register_trigger("http", fid, {"api_path": "/x", "verb": "GET"})
        with pytest.raises(TriggerRegistrationError) as caught:
            await ref.ready
        assert "unknown key \"verb\"" in caught.value.message
        assert refused and refused[0].trigger_id == ref.id
        unknown = worker.register_trigger(f"no-such-type-{uuid.uuid4().hex[:6]}", fid, {})
        assert (await unknown.ready).parked is True  # kept until a worker provides the type


async def test_a_trigger_type_provided_by_python(engine) -> None:
    async with await connect(engine.bridge) as provider, await connect(engine.bridge) as user:
        type_id = f"py-webhook-{uuid.uuid4().hex[:6]}"
        seen: list[flint.TriggerConfig] = []

        class Webhooks:
            async def register_trigger(self, trigger: flint.TriggerConfig) -> None:
                if not str(trigger.config.get("url", "")).startswith("https://"):
                    raise ValueError("url must be https")
                seen.append(trigger)

            def unregister_trigger(self, trigger: flint.TriggerConfig) -> None:
                seen.remove(next(t for t in seen if t.id == trigger.id))

        provider.register_trigger_type(type_id, "webhooks from Python", Webhooks())
        fid = unique("py::hook")
        user.register_function(fid, lambda data: data)
        await asyncio.sleep(0.1)
        good = user.register_trigger(type_id, fid, {"url": "https://example.com"})
        assert (await good.ready).parked is False
        assert seen[0].function_id == fid and seen[0].config == {"url": "https://example.com"}
        bad = user.register_trigger(type_id, fid, {"url": "http://plain"})
        with pytest.raises(TriggerRegistrationError, match="url must be https"):
            await bad.ready
        good.unregister()
        await wait_for(lambda: not seen, what="the trigger to be removed from the provider")


async def test_calls_after_shutdown_fail_with_worker_shutting_down(engine) -> None:
    worker = await connect(engine.bridge)
    await worker.shutdown()
    with pytest.raises(FlintInvocationError) as caught:
        await worker.trigger("node::echo", {})
    assert caught.value.code == "worker_shutting_down"


async def test_records_logged_by_a_log_triggers_handler_do_not_fire_it_again(engine) -> None:
    async with await connect(engine.bridge) as worker:
        handler = flint.LogHandler(worker)
        log = logging.getLogger(f"py-test-{uuid.uuid4().hex[:6]}")
        log.addHandler(handler)
        marker = uuid.uuid4().hex
        fid = unique("py::on-warning")
        fired: list[dict] = []

        @worker.function(fid)
        async def on_warning(record: dict) -> None:
            if marker in str(record.get("message")):
                fired.append(record)
                log.warning("handled %s", marker)  # a warning of its own: must not fire the trigger again

        ref = worker.register_trigger("log", fid, {"min_level": "warn"})
        await ref.ready
        log.warning("disk almost full %s", marker)
        await wait_for(lambda: fired, what="the log trigger")
        await asyncio.sleep(0.5)
        assert len(fired) == 1
        ref.unregister()
        log.removeHandler(handler)
