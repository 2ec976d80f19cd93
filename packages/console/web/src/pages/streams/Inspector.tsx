import { ArrowDownLeft, ArrowUpRight, ChevronRight, Eraser, Pause, Play } from 'lucide-react';
import { ToggleGroup } from 'radix-ui';
import { useCallback, useEffect, useMemo, useState, useSyncExternalStore } from 'react';
import { JsonView } from '../../components/JsonView.js';
import { absoluteTime, formatBytes, useNow } from '../../lib/format.js';
import { clockTime } from '../logs/model.js';
import { VirtualList } from '../logs/VirtualList.js';
import { type InspectorFrame, type InspectorSnapshot, MAX_FRAMES, StreamInspector } from './inspector.js';
import type { FrameDirection } from './search.js';

const ROW_HEIGHT = 32;

const KIND_TONE: Record<string, string> = { sync: 'info', create: 'ok', update: 'warn', delete: 'error', event: 'info', unauthorized: 'error' };

const noSubscribe = () => () => {};

/** `ws(s)://<this page's host>/_console/streams`: the console's proxy to the engine's stream socket. */
function proxyUrl(): string {
  const url = new URL('/_console/streams', window.location.href);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.href;
}
const noSnapshot = () => undefined;

/** The inspector of `stream`/`group` while mounted: one socket, closed (after a leave) on unmount or when the group changes. */
function useInspector(stream: string, group: string): [StreamInspector | undefined, InspectorSnapshot | undefined] {
  const [inspector, setInspector] = useState<StreamInspector>();
  useEffect(() => {
    const created = new StreamInspector(stream, group, proxyUrl());
    setInspector(created);
    return () => created.dispose();
  }, [stream, group]);
  const current = inspector && inspector.stream === stream && inspector.group === group ? inspector : undefined;
  const snapshot = useSyncExternalStore(current?.subscribe ?? noSubscribe, current?.getSnapshot ?? noSnapshot);
  return [current, snapshot];
}

export function Counter({ label, value, title, testId }: { label: string; value: string | number; title?: string; testId?: string }) {
  return (
    <div className="card st-counter" title={title} data-testid={testId}>
      <span className="muted small">{label}</span>
      <strong className="st-counter-value" data-testid={testId ? `${testId}-value` : undefined}>
        {typeof value === 'number' ? value.toLocaleString() : value}
      </strong>
    </div>
  );
}

function FrameRow({ frame, expanded, onToggle }: { frame: InspectorFrame; expanded: boolean; onToggle: (seq: number) => void }) {
  return (
    <div className={`st-frame${expanded ? ' expanded' : ''}`} data-testid="stream-frame" data-direction={frame.dir} data-kind={frame.kind}>
      <button type="button" className="st-frame-line" aria-expanded={expanded} onClick={() => onToggle(frame.seq)}>
        <ChevronRight size={14} className="log-chevron" aria-hidden="true" />
        <time className="mono muted st-frame-time" dateTime={new Date(frame.at).toISOString()} title={absoluteTime(frame.at)}>
          {clockTime(frame.at)}
        </time>
        <span className={`st-dir ${frame.dir}`} title={frame.dir === 'in' ? 'Received from the engine' : 'Sent by this page'}>
          {frame.dir === 'in' ? <ArrowDownLeft size={13} aria-hidden="true" /> : <ArrowUpRight size={13} aria-hidden="true" />}
          {frame.dir}
        </span>
        <span className={`badge st-kind ${KIND_TONE[frame.kind] ?? ''}`}>{frame.kind}</span>
        {frame.eventType && <span className="mono small st-event-type">{frame.eventType}</span>}
        <span className="mono st-frame-id" title={frame.id ?? 'the whole group'}>
          {frame.id ?? <span className="muted">—</span>}
        </span>
        <span className="muted small st-frame-size">{formatBytes(frame.size)}</span>
      </button>
      {expanded && (
        <div className="st-frame-detail">
          <JsonView value={frame.message} label={`Frame ${frame.seq}`} maxHeight={320} />
        </div>
      )}
    </div>
  );
}

function statusText(s: InspectorSnapshot, now: number): { text: string; tone: string } {
  if (s.status === 'open') return { text: 'Connected', tone: 'ok' };
  if (s.status === 'connecting') return { text: 'Connecting…', tone: 'warn' };
  if (s.status === 'closed') return { text: 'Closed', tone: 'error' };
  const wait = s.retryAt ? Math.max(0, Math.ceil((s.retryAt - now) / 1000)) : 0;
  const why = s.lastClose ? ` (closed ${s.lastClose.code}${s.lastClose.reason ? `: ${s.lastClose.reason}` : ''})` : '';
  return { text: wait > 0 ? `Reconnecting in ${wait} s${why}` : `Reconnecting…${why}`, tone: 'warn' };
}

/**
 * The live message inspector of one group: its socket's counters, the frames both ways (newest first,
 * the newest 1,000), a direction filter, Pause (frames are held, not dropped, up to 1,000) and Clear.
 */
export function Inspector({
  stream,
  group,
  dir,
  onDir,
}: {
  stream: string;
  group: string;
  dir: FrameDirection | undefined;
  onDir: (d: FrameDirection | undefined) => void;
}) {
  const [inspector, snap] = useInspector(stream, group);
  const [expanded, setExpanded] = useState<ReadonlySet<number>>(() => new Set());
  const now = useNow(1000);
  const toggle = useCallback(
    (seq: number) =>
      setExpanded((s) => {
        const next = new Set(s);
        if (!next.delete(seq)) next.add(seq);
        return next;
      }),
    [],
  );
  const frames = snap?.frames;
  const shown = useMemo(() => (frames && dir ? frames.filter((f) => f.dir === dir) : (frames ?? [])), [frames, dir]);
  const itemKey = useCallback((f: InspectorFrame) => f.seq, []);
  if (!snap || !inspector) return <p className="muted">Opening the inspector…</p>;
  const status = statusText(snap, now);
  const c = snap.counters;

  return (
    <section className="section st-inspector" aria-label={`Inspector of ${stream} / ${group}`} data-testid="stream-inspector">
      <div className="st-inspector-head">
        <h3>Live messages</h3>
        <span className={`badge ${status.tone}`} data-testid="inspector-status" role="status">
          {status.text}
        </span>
      </div>
      <section className="st-counters" aria-label="This page's inspector socket">
        <Counter label="Total" value={c.inbound + c.outbound} testId="inspector-total" title="Frames received and sent by this page's inspector socket" />
        <Counter label="Inbound" value={c.inbound} testId="inspector-inbound" title={`Frames received from the engine (${formatBytes(c.bytesIn)})`} />
        <Counter
          label="Outbound"
          value={c.outbound}
          testId="inspector-outbound"
          title={`Frames this page sent: joins and leaves (${formatBytes(c.bytesOut)})`}
        />
        <Counter
          label="Buffered"
          value={formatBytes(snap.heldBytes)}
          testId="inspector-buffered"
          title={`Bytes of the frames the inspector holds (listed${snap.held ? ' and waiting while paused' : ''}); the socket's own send buffer holds ${formatBytes(snap.socketBuffered)}`}
        />
      </section>
      <div className="st-inspector-tools">
        <ToggleGroup.Root
          type="single"
          className="st-seg"
          aria-label="Direction"
          value={dir ?? 'both'}
          onValueChange={(v) => {
            if (v) onDir(v === 'in' || v === 'out' ? v : undefined);
          }}
        >
          <ToggleGroup.Item value="both" className="st-seg-item" data-testid="dir-both">
            Both
          </ToggleGroup.Item>
          <ToggleGroup.Item value="in" className="st-seg-item" data-testid="dir-in">
            <ArrowDownLeft size={13} aria-hidden="true" /> In
          </ToggleGroup.Item>
          <ToggleGroup.Item value="out" className="st-seg-item" data-testid="dir-out">
            <ArrowUpRight size={13} aria-hidden="true" /> Out
          </ToggleGroup.Item>
        </ToggleGroup.Root>
        <span className="spacer" />
        <button
          type="button"
          className={`btn small${snap.paused ? ' primary' : ''}`}
          aria-pressed={snap.paused}
          data-testid="inspector-pause"
          onClick={() => (snap.paused ? inspector.resume() : inspector.pause())}
        >
          {snap.paused ? <Play size={13} aria-hidden="true" /> : <Pause size={13} aria-hidden="true" />}
          {snap.paused ? `Resume${snap.held ? ` (${snap.held} waiting)` : ''}` : 'Pause'}
        </button>
        <button type="button" className="btn small" data-testid="inspector-clear" onClick={() => inspector.clear()}>
          <Eraser size={13} aria-hidden="true" />
          Clear
        </button>
      </div>
      {snap.paused && (
        <p className="muted small" role="status">
          Paused: new frames are counted and held ({snap.held} waiting{snap.dropped ? `, ${snap.dropped} older ones dropped past ${MAX_FRAMES}` : ''}); Resume
          lists them.
        </p>
      )}
      {shown.length === 0 ? (
        <p className="muted small st-no-frames">
          {snap.frames.length === 0
            ? 'No frames yet. The join is answered with a sync of the group; every change of an item (stream::set, update, delete) and every custom event (stream::send) follows.'
            : `No ${dir === 'in' ? 'inbound' : 'outbound'} frames in the list.`}
        </p>
      ) : (
        <VirtualList
          items={shown}
          itemKey={itemKey}
          rowHeight={ROW_HEIGHT}
          label="Frames, newest first"
          testId="frame-list"
          className="st-frames"
          newLabel={(n) => `${n} new frame${n === 1 ? '' : 's'}`}
          renderItem={(f) => <FrameRow frame={f} expanded={expanded.has(f.seq)} onToggle={toggle} />}
        />
      )}
      <p className="muted small">
        The newest {MAX_FRAMES.toLocaleString()} frames are kept. The page&apos;s socket goes through the console (<code>/_console/streams</code>) to the
        engine&apos;s stream port and reconnects (and joins again) when it drops.
      </p>
    </section>
  );
}
