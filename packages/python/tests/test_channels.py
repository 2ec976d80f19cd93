"""Channels between functions: a writer handed over in a payload, text items beside the bytes, and a
failed writer that the reader sees as an error rather than a complete stream."""

from __future__ import annotations

import asyncio

import flint
import pytest
from flint import ChannelWriter, FlintError

from support import connect, unique


async def test_a_writer_handed_to_another_function_streams_bytes_and_messages(engine) -> None:
    async with await connect(engine.bridge) as worker:
        fid = unique("py::produce")

        @worker.function(fid)
        async def produce(data: dict) -> int:
            writer = data["out"]
            assert isinstance(writer, ChannelWriter)
            await writer.send_message("starting")
            total = 0
            for i in range(data["chunks"]):
                chunk = bytes([i % 256]) * 50_000
                await writer.write(chunk)
                total += len(chunk)
            await writer.close()
            return total

        channel = await worker.create_channel()
        messages: list[str] = []
        channel.reader.on_message(messages.append)
        reading = asyncio.create_task(channel.reader.read_all())
        sent = await worker.trigger(fid, {"out": channel.writer_ref, "chunks": 5})
        received = await reading
        assert sent == len(received) == 250_000
        assert received[:1] == b"\x00" and received[-1:] == b"\x04"
        assert messages == ["starting"]


async def test_a_failed_writer_is_an_error_for_the_reader(engine) -> None:
    async with await connect(engine.bridge) as worker:
        channel = await worker.create_channel()
        reading = asyncio.create_task(channel.reader.read_all())
        await channel.writer.write(b"partial")
        await channel.writer.abort("the producer crashed")
        with pytest.raises(FlintError) as caught:
            await reading
        assert caught.value.code == "channel_closed"
        assert "1011" in caught.value.message
        with pytest.raises(FlintError) as again:
            await channel.writer.write(b"more")
        assert again.value.code == "channel_closed"


async def test_writing_after_the_reader_left_raises_channel_closed(engine) -> None:
    async with await connect(engine.bridge) as worker:
        channel = await worker.create_channel()
        chunks = channel.reader.__aiter__()
        await channel.writer.write(b"first")
        assert await chunks.__anext__() == b"first"
        await channel.reader.close()
        closed = asyncio.Event()
        channel.writer.on_close(closed.set)
        await asyncio.wait_for(closed.wait(), 5)
        assert channel.writer.closed
        with pytest.raises(FlintError, match="channel_closed"):
            await channel.writer.write(b"too late")
        _ = flint
