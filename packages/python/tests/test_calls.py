"""Functions and calls: register, call both ways between Python and Node, void and enqueue, errors."""

from __future__ import annotations

import asyncio
import threading

import flint
import pytest
from flint import FlintError, FlintInvocationError, TriggerAction

from support import connect, provided, unique, wait_for


async def test_a_python_function_is_called_from_node_and_python(engine) -> None:
    async with await connect(engine.bridge) as worker:
        fid = unique("py::double")

        @worker.function(fid, description="doubles n")
        async def double(data: dict) -> dict:
            return {"n": data["n"] * 2, "runtime": "python"}

        listed = await provided(worker, fid)
        assert listed["description"] == "doubles n"
        assert await worker.trigger(fid, {"n": 21}) == {"n": 42, "runtime": "python"}
        via_node = await worker.trigger("node::call", {"function_id": fid, "payload": {"n": 5}})
        assert via_node == {"n": 10, "runtime": "python"}


async def test_python_calls_a_node_function(engine) -> None:
    async with await connect(engine.bridge) as worker:
        assert await worker.trigger("node::echo", {"a": [1, None, "x"]}) == {"echoed": {"a": [1, None, "x"]}, "runtime": "node"}
        assert await worker.trigger("node::echo") == {"echoed": None, "runtime": "node"}


async def test_sync_handlers_run_in_threads_with_the_invocation_context(engine) -> None:
    async with await connect(engine.bridge) as worker:
        fid = unique("py::sync")
        loop_thread = threading.get_ident()

        @worker.function(fid)
        def handler(data: int, ctx: flint.InvocationContext) -> dict:
            current = flint.current_invocation()
            nested = worker.trigger_sync("node::echo", data)  # a sync handler may call out from its thread
            return {
                "other_thread": threading.get_ident() != loop_thread,
                "ctx": ctx.function_id,
                "current": current.function_id if current else None,
                "nested": nested,
            }

        result = await worker.trigger(fid, 7)
        assert result == {"other_thread": True, "ctx": fid, "current": fid, "nested": {"echoed": 7, "runtime": "node"}}


async def test_trigger_sync_on_the_loop_is_refused(engine) -> None:
    async with await connect(engine.bridge) as worker:
        with pytest.raises(RuntimeError, match="await worker.trigger"):
            worker.trigger_sync("node::echo", 1)


async def test_void_calls_return_at_once_and_run(engine) -> None:
    async with await connect(engine.bridge) as worker:
        fid = unique("py::sink")
        seen: list[object] = []

        @worker.function(fid)
        async def sink(data: dict) -> None:
            seen.append(data)

        await provided(worker, fid)
        assert await worker.trigger(fid, {"v": 1}, action=TriggerAction.void()) is None
        await wait_for(lambda: seen, what="the void call")
        assert seen == [{"v": 1}]


async def test_enqueue_returns_a_receipt_and_the_function_runs(engine) -> None:
    async with await connect(engine.bridge) as worker:
        fid = unique("py::job")
        done = asyncio.Event()
        got: list[object] = []

        @worker.function(fid)
        async def job(data: dict) -> None:
            got.append(data)
            done.set()

        await provided(worker, fid)
        receipt = await worker.trigger(fid, {"job": 1}, action=TriggerAction.enqueue("default"))
        assert isinstance(receipt["messageReceiptId"], str)
        await asyncio.wait_for(done.wait(), 5)
        assert got == [{"job": 1}]


async def test_handler_errors_keep_their_code(engine) -> None:
    async with await connect(engine.bridge) as worker:
        fid = unique("py::stock")

        @worker.function(fid)
        async def stock(data: dict) -> dict:
            raise FlintError("out_of_stock", f"no {data['sku']} left")

        with pytest.raises(FlintInvocationError) as caught:
            await worker.trigger(fid, {"sku": "A1"})
        assert caught.value.code == "out_of_stock"
        assert caught.value.message == "no A1 left"
        # Node sees the same code.
        with pytest.raises(FlintInvocationError) as via_node:
            await worker.trigger("node::call", {"function_id": fid, "payload": {"sku": "B2"}})
        assert via_node.value.code == "out_of_stock"


async def test_a_plain_exception_is_invocation_failed_with_the_python_traceback(engine) -> None:
    async with await connect(engine.bridge) as worker:
        fid = unique("py::boom")

        @worker.function(fid)
        def boom(data: dict) -> None:
            raise ZeroDivisionError("division by zero")

        with pytest.raises(FlintInvocationError) as caught:
            await worker.trigger(fid, {})
        assert caught.value.code == "invocation_failed"
        assert caught.value.message == "ZeroDivisionError: division by zero"
        assert "Traceback" in (caught.value.stacktrace or "")


async def test_node_errors_reach_python_with_their_code(engine) -> None:
    async with await connect(engine.bridge) as worker:
        with pytest.raises(FlintInvocationError) as caught:
            await worker.trigger("node::fail", {"code": "card_declined", "message": "no funds"})
        assert (caught.value.code, caught.value.message) == ("card_declined", "no funds")


async def test_unknown_function_and_timeout(engine) -> None:
    async with await connect(engine.bridge) as worker:
        with pytest.raises(FlintInvocationError) as missing:
            await worker.trigger(unique("nobody::home"), {})
        assert missing.value.code == "function_not_found"

        fid = unique("py::slow")

        @worker.function(fid)
        async def slow(data: dict) -> None:
            await asyncio.sleep(2)

        with pytest.raises(FlintInvocationError) as late:
            await worker.trigger(fid, {}, timeout=0.2)
        assert late.value.code == "invocation_timeout"


async def test_a_routing_failure_inside_a_handler_names_the_nested_call(engine) -> None:
    async with await connect(engine.bridge) as worker:
        fid = unique("py::outer")
        missing = unique("nobody::there")

        @worker.function(fid)
        async def outer(data: dict) -> dict:
            return await worker.trigger(missing, {})

        with pytest.raises(FlintInvocationError) as caught:
            await worker.trigger(fid, {})
        assert caught.value.code == "invocation_failed"
        assert caught.value.cause is not None and caught.value.cause.code == "function_not_found"


async def test_unregister_removes_the_function(engine) -> None:
    async with await connect(engine.bridge) as worker:
        fid = unique("py::gone")
        ref = worker.register_function(fid, lambda data: data)
        await provided(worker, fid)
        ref.unregister()

        async def gone() -> bool:
            listing = await worker.trigger("engine::functions::list", {})
            return all(f["function_id"] != fid for f in listing["functions"])

        await wait_for(gone, what="the function to go")
        with pytest.raises(FlintInvocationError) as caught:
            await worker.trigger(fid, {})
        assert caught.value.code == "function_not_found"


async def test_bad_arguments_are_refused_before_anything_is_sent(engine) -> None:
    async with await connect(engine.bridge) as worker:
        with pytest.raises(ValueError, match="action must be"):
            await worker.trigger("node::echo", {}, action={"type": "later"})
        with pytest.raises(ValueError, match="timeout must be a positive number"):
            await worker.trigger("node::echo", {}, timeout=0)
        with pytest.raises(TypeError, match=r"payload\.when: a value of type object has no JSON form"):
            await worker.trigger("node::echo", {"when": object()})
        with pytest.raises(ValueError, match="already registered"):
            worker.register_function("py::dup", lambda d: d)
            worker.register_function("py::dup", lambda d: d)


async def test_connect_fails_loudly_when_no_engine_listens() -> None:
    with pytest.raises(FlintInvocationError) as caught:
        await flint.connect("ws://127.0.0.1:9", connect_timeout=0.5)
    assert caught.value.code == "not_connected"
    assert "connection refused" in caught.value.message


async def test_callable_objects_and_partials_are_handlers_without_formats(engine) -> None:
    import functools

    class Multiplier:
        def __init__(self, factor: int) -> None:
            self.factor = factor

        async def __call__(self, data: int) -> int:
            return data * self.factor

    def add(a: int, data: int) -> int:
        return a + data

    async with await connect(engine.bridge) as worker:
        times, plus = unique("py::times"), unique("py::plus")
        worker.register_function(times, Multiplier(3))
        worker.register_function(plus, functools.partial(add, 10))
        assert await worker.trigger(times, 5) == 15
        assert await worker.trigger(plus, 5) == 15
        assert (await provided(worker, plus))["request_format"] is None


async def test_nested_calls_carry_the_trace_also_from_sync_handlers(engine) -> None:
    async with await connect(engine.bridge) as worker:
        inner, outer_async, outer_sync = unique("py::inner"), unique("py::outer-async"), unique("py::outer-sync")

        @worker.function(inner)
        async def inner_fn(data: object) -> str | None:
            ctx = flint.current_invocation()
            return ctx.trace_id if ctx else None

        @worker.function(outer_async)
        async def outer_async_fn(data: object, ctx: flint.InvocationContext) -> list:
            return [ctx.trace_id, await worker.trigger(inner, {})]

        @worker.function(outer_sync)
        def outer_sync_fn(data: object, ctx: flint.InvocationContext) -> list:
            return [ctx.trace_id, worker.trigger_sync(inner, {})]

        for fid in (outer_async, outer_sync):
            outer_trace, inner_trace = await worker.trigger(fid, {})
            assert outer_trace is not None
            assert inner_trace == outer_trace, fid
