import { withModule } from '../client.js';
import { table } from '../table.js';

export interface StreamsCommandOptions {
  json?: boolean;
  url?: string;
  token?: string;
}

interface StreamCounters {
  name: string;
  subscriptions: number;
  messages_in: number;
  messages_out: number;
  bytes_out: number;
  events: number;
}

interface StatsAnswer {
  totals: { connections: number; subscriptions: number; messages_out: number; buffered_bytes: number; slow_disconnects: number };
  streams: StreamCounters[];
}

const STREAM_MODULE = { module: 'flint-stream', what: 'stream module' };

/**
 * `flint streams`: every stream with its groups (`stream::list_all`) and the stream listener's live counters
 * on this engine (`engine::streams::stats`): subscriptions, events published, frames sent.
 */
export function streamsList(options: StreamsCommandOptions): Promise<string> {
  return withModule(options, STREAM_MODULE, async (w) => {
    const all = (await w.trigger({ function_id: 'stream::list_all', payload: {} })) as { stream: { id: string; groups: string[] }[] };
    const stats = (await w.trigger({ function_id: 'engine::streams::stats', payload: {} })) as StatsAnswer;
    if (options.json) return JSON.stringify({ streams: all.stream, stats }, null, 2);
    const counters = new Map(stats.streams.map((s) => [s.name, s]));
    const names = [...new Set([...all.stream.map((s) => s.id), ...counters.keys()])].sort();
    const groupsOf = new Map(all.stream.map((s) => [s.id, s.groups]));
    const t = stats.totals;
    const head = `${t.connections} client${t.connections === 1 ? '' : 's'} connected, ${t.subscriptions} subscription${t.subscriptions === 1 ? '' : 's'}, ${t.messages_out} frames sent, ${t.buffered_bytes} bytes waiting, ${t.slow_disconnects} slow client${t.slow_disconnects === 1 ? '' : 's'} dropped`;
    if (names.length === 0)
      return `${head}\nno streams yet: write one with stream::set (flint trigger --function-id stream::set --payload '{"stream_name":"s","group_id":"g","item_id":"i","data":1}')`;
    const rows = names.map((name) => {
      const c = counters.get(name);
      const groups = groupsOf.get(name) ?? [];
      const shown = groups.length > 3 ? `${groups.slice(0, 3).join(', ')} (+${groups.length - 3})` : groups.join(', ');
      return [name, String(groups.length), shown || '-', String(c?.subscriptions ?? 0), String(c?.events ?? 0), String(c?.messages_out ?? 0)];
    });
    return `${head}\n${table(['STREAM', 'GROUPS', 'GROUP IDS', 'SUBSCRIPTIONS', 'EVENTS', 'FRAMES SENT'], rows)}`;
  });
}
