import { useQuery } from '@tanstack/react-query';
import { useNavigate, useSearch } from '@tanstack/react-router';
import { useId, useMemo } from 'react';
import type { StreamStats, StreamsResponse } from '../../../src/api-types.js';
import { EmptyState } from '../components/EmptyState.js';
import { ErrorBox } from '../components/ErrorBox.js';
import { api } from '../lib/api.js';
import { formatBytes, matches, timeOfDay } from '../lib/format.js';
import { LoadingLine } from './PageStatus.js';
import { Counter } from './streams/Inspector.js';
import { StreamPanel } from './streams/StreamPanel.js';
import { StreamTable } from './streams/StreamTable.js';
import { useSearchText } from './triggers/useSearchText.js';
import './logs/logs.css';
import './streams/streams.css';

/** The stream list and the engine's counters change with every message, which is not pushed: polled every 2 s while shown. */
const useStreams = () => useQuery({ queryKey: ['streams'], queryFn: () => api.get<StreamsResponse>('_console/streams'), refetchInterval: 2000 });

/** What the engine's stream listener has done since it started (`engine::streams::stats`), for every client. */
function EngineCounters({ stats }: { stats: StreamStats }) {
  const t = stats.totals;
  return (
    <section className="st-engine" aria-label="The engine's stream listener">
      <h3>
        Engine, every client <span className="muted small st-updated">updated {timeOfDay(stats.timestamp)}</span>
      </h3>
      <div className="st-counters">
        <Counter label="Clients" value={t.connections} testId="engine-clients" title="Open WebSocket connections to the engine's stream port" />
        <Counter label="Subscriptions" value={t.subscriptions} testId="engine-subscriptions" />
        <Counter label="Frames sent" value={t.messages_out} testId="engine-frames-out" title={`Frames sent to clients (${formatBytes(t.bytes_out)})`} />
        <Counter label="Frames received" value={t.messages_in} testId="engine-frames-in" title={`Joins and leaves from clients (${formatBytes(t.bytes_in)})`} />
        <Counter label="Events" value={t.events} testId="engine-events" title="Changes and custom events published" />
        <Counter
          label="Buffered"
          value={formatBytes(t.buffered_bytes)}
          testId="engine-buffered"
          title={`Bytes waiting to be written to client sockets${t.slow_disconnects ? `; ${t.slow_disconnects} slow clients disconnected` : ''}`}
        />
      </div>
    </section>
  );
}

/** Streams of flint-stream with their groups, the engine's live counters, and a live inspector of one group (`?stream=&group=`). */
export function StreamsPage() {
  const search = useSearch({ from: '/streams' });
  const navigate = useNavigate({ from: '/streams' });
  const streams = useStreams();
  const filterId = useId();
  const [text, setText] = useSearchText(search.q, (q) => void navigate({ search: (s) => ({ ...s, q }), replace: true }), 150);

  const all = streams.data?.streams ?? [];
  const shown = useMemo(() => all.filter((s) => matches(search.q ?? '', s.name, s.type, ...s.groups)), [all, search.q]);
  const entry = search.stream ? all.find((s) => s.name === search.stream) : undefined;
  const select = (stream: string | undefined, group?: string) => void navigate({ search: (s) => ({ ...s, stream, group }) });
  const counts = { user: all.filter((s) => s.type === 'user').length, system: all.filter((s) => s.type === 'system').length };

  return (
    <div className="page">
      <header className="page-header">
        <h1>Streams</h1>
        {streams.data?.available && (
          <>
            <span className="badge">{counts.user} user</span>
            {counts.system > 0 && <span className="badge warn">{counts.system} system</span>}
          </>
        )}
      </header>
      {streams.isPending ? (
        <div className="st-pad">
          <LoadingLine />
        </div>
      ) : streams.error && !streams.data ? (
        <div className="st-pad">
          <ErrorBox error={streams.error} />
        </div>
      ) : streams.data && !streams.data.available ? (
        <EmptyState title="The stream module (flint-stream) is not loaded">
          Add <code>flint-stream</code> to the engine&apos;s <code>modules</code> to get live streams: items pushed to WebSocket clients as they change.
        </EmptyState>
      ) : (
        <>
          <div className="toolbar">
            <label htmlFor={filterId} className="sr-only">
              Filter streams
            </label>
            <input
              id={filterId}
              type="search"
              className="input st-filter"
              placeholder="Filter streams and groups"
              data-search
              value={text}
              onChange={(e) => setText(e.target.value)}
            />
            {streams.error && <span className="error-text small">Refresh failed: {(streams.error as Error).message}</span>}
          </div>
          <div className="page-body">
            <div className="page-list st-list">
              {streams.data?.stats && <EngineCounters stats={streams.data.stats} />}
              {all.length === 0 ? (
                <EmptyState title="No streams yet">
                  A stream appears when a worker stores an item in it (<code>{"worker.stream.set('scores', 'match-7', 'home', {goals: 1})"}</code> or{' '}
                  <code>stream::set</code>) or a client uses it.
                </EmptyState>
              ) : shown.length === 0 ? (
                <EmptyState title={`No stream matches “${search.q ?? ''}”`}>
                  <button type="button" className="btn" onClick={() => setText('')}>
                    Clear the filter
                  </button>
                </EmptyState>
              ) : (
                <StreamTable streams={shown} selected={search.stream} selectedGroup={search.group} onSelect={(s, g) => select(s, g)} />
              )}
            </div>
            {search.stream && (
              <StreamPanel
                key={search.stream}
                name={search.stream}
                entry={entry}
                group={search.group}
                dir={search.dir}
                onGroup={(group) => void navigate({ search: (s) => ({ ...s, group }) })}
                onDir={(dir) => void navigate({ search: (s) => ({ ...s, dir }), replace: true })}
                onClose={() => select(undefined)}
              />
            )}
          </div>
        </>
      )}
    </div>
  );
}
