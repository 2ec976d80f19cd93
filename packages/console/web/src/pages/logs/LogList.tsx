import { Link } from '@tanstack/react-router';
import { Activity, ChevronRight, Filter } from 'lucide-react';
import { useCallback, useState } from 'react';
import type { LogRecord } from '../../../../src/api-types.js';
import { CopyButton } from '../../components/CopyButton.js';
import { JsonView } from '../../components/JsonView.js';
import { absoluteTime } from '../../lib/format.js';
import { type LogLine, clockTime, isoNanos, levelOf, levelTone } from './model.js';
import { VirtualList } from './VirtualList.js';

/** Height of a collapsed line (px). */
const ROW_HEIGHT = 34;

const empty = (v: Record<string, unknown>) => Object.keys(v).length === 0;

/** A record's fields, in the log shape of the spec (timestamp, severity, body, attributes, trace, span, service) and then the resource. */
function LogDetail({ record }: { record: LogRecord }) {
  return (
    <div className="log-detail" data-testid="log-detail">
      <dl className="grid-info small">
        <dt>timestamp_unix_nano</dt>
        <dd>
          <span className="mono">{record.timestamp_unix_nano}</span> <span className="muted">{isoNanos(record.timestamp_unix_nano)}</span>
        </dd>
        <dt>severity_text</dt>
        <dd>
          <span className="mono">{record.severity_text || '—'}</span> <span className="muted">(severity_number {record.severity_number})</span>
        </dd>
        <dt>body</dt>
        <dd>
          <pre className="log-body-full">{record.body}</pre>
        </dd>
        <dt>attributes</dt>
        <dd>{empty(record.attributes) ? <span className="muted">none</span> : <JsonView value={record.attributes} label="Attributes" maxHeight={240} />}</dd>
        <dt>trace_id</dt>
        <dd>
          {record.trace_id ? (
            <span className="log-id-line">
              <span className="code-id">{record.trace_id}</span>
              <CopyButton text={record.trace_id} label="Copy trace id" />
              <Link to="/traces" search={{ trace: record.trace_id, span: record.span_id ?? undefined }} className="btn small" data-testid="log-open-trace">
                <Activity size={13} aria-hidden="true" />
                Open trace
              </Link>
              <Link to="/logs" search={{ trace_id: record.trace_id }} className="btn small" data-testid="log-trace-filter">
                <Filter size={13} aria-hidden="true" />
                Logs of this trace
              </Link>
            </span>
          ) : (
            <span className="muted">none</span>
          )}
        </dd>
        <dt>span_id</dt>
        <dd>{record.span_id ? <span className="code-id">{record.span_id}</span> : <span className="muted">none</span>}</dd>
        <dt>service_name</dt>
        <dd className="mono">{record.service_name}</dd>
        <dt>resource</dt>
        <dd>{empty(record.resource) ? <span className="muted">none</span> : <JsonView value={record.resource} label="Resource" maxHeight={200} />}</dd>
        <dt>observed</dt>
        <dd>
          <span className="mono">{record.observed_timestamp_unix_nano}</span> <span className="muted">{isoNanos(record.observed_timestamp_unix_nano)}</span>
        </dd>
        {record.instrumentation_scope_name && (
          <>
            <dt>scope</dt>
            <dd className="mono">
              {record.instrumentation_scope_name}
              {record.instrumentation_scope_version ? ` ${record.instrumentation_scope_version}` : ''}
            </dd>
          </>
        )}
      </dl>
      <div className="log-detail-actions">
        <CopyButton text={JSON.stringify(record, null, 2)} label="Copy the record as JSON" />
        <span className="muted small">Copy as JSON</span>
      </div>
    </div>
  );
}

function LogRow({ line, expanded, fresh, onToggle }: { line: LogLine; expanded: boolean; fresh: boolean; onToggle: (id: number) => void }) {
  const r = line.record;
  const level = levelOf(r);
  return (
    <div className={`log-row${expanded ? ' expanded' : ''}${fresh ? ' log-fresh' : ''}`} data-testid="log-row" data-level={level ?? 'unknown'}>
      <div className="log-line">
        <button type="button" className="log-toggle" aria-expanded={expanded} onClick={() => onToggle(line.id)}>
          <ChevronRight size={14} className="log-chevron" aria-hidden="true" />
          <time className="log-time mono" dateTime={new Date(line.ms).toISOString()} title={absoluteTime(line.ms)}>
            {clockTime(line.ms)}
          </time>
          <span className={`badge log-level ${levelTone(level)}`}>{(r.severity_text || level || '—').toUpperCase()}</span>
          <span className="log-service small" title={r.service_name}>
            {r.service_name}
          </span>
          <span className="log-body">{r.body}</span>
        </button>
        {r.trace_id && (
          <Link
            to="/traces"
            search={{ trace: r.trace_id, span: r.span_id ?? undefined }}
            className="log-trace-link small"
            title={`Open trace ${r.trace_id}`}
            data-testid="log-trace-link"
          >
            <Activity size={12} aria-hidden="true" />
            <span className="mono">{r.trace_id.slice(0, 8)}</span>
          </Link>
        )}
      </div>
      {expanded && <LogDetail record={r} />}
    </div>
  );
}

/** The lines, newest first, virtualised; a click on a line shows all its fields. */
export function LogList({ lines, freshFrom, freshTo }: { lines: LogLine[]; freshFrom: number; freshTo: number }) {
  const [expanded, setExpanded] = useState<ReadonlySet<number>>(() => new Set());
  const toggle = useCallback(
    (id: number) =>
      setExpanded((s) => {
        const next = new Set(s);
        if (!next.delete(id)) next.add(id);
        return next;
      }),
    [],
  );
  const itemKey = useCallback((l: LogLine) => l.id, []);
  return (
    <VirtualList
      items={lines}
      itemKey={itemKey}
      rowHeight={ROW_HEIGHT}
      label="Log lines, newest first"
      testId="log-list"
      className="log-list"
      newLabel={(n) => `${n} new line${n === 1 ? '' : 's'}`}
      renderItem={(line) => <LogRow line={line} expanded={expanded.has(line.id)} fresh={line.id >= freshFrom && line.id < freshTo} onToggle={toggle} />}
    />
  );
}
