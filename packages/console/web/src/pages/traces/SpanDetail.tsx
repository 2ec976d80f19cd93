import { X } from 'lucide-react';
import { Tabs } from 'radix-ui';
import { useMemo, useState } from 'react';
import type { TraceLogRecord } from '../../../../src/api-types.js';
import { CopyButton } from '../../components/CopyButton.js';
import { JsonView } from '../../components/JsonView.js';
import { SPAN_TABS, type SpanTab } from './model/filters.js';
import { formatNs } from './model/format.js';
import { severityClass, spanBaggage, spanErrors, spanLogs } from './model/span-info.js';
import type { SpanNode, TraceModel } from './model/tree.js';
import { StatusBadge } from './StatusBadge.js';

const TAB_LABEL: Record<SpanTab, string> = { info: 'Info', tags: 'Tags', logs: 'Logs', errors: 'Errors', baggage: 'Baggage' };

const isoNs = (ns: number) => {
  const d = new Date(ns / 1e6);
  if (Number.isNaN(d.getTime())) return String(ns);
  const micro = String(Math.floor((ns % 1e6) / 1e3)).padStart(3, '0');
  return `${d.toISOString().replace('Z', '')}${micro}Z`;
};

/** The selected span: info, tags (attributes), its log records, its errors and its baggage (`?tab=`). */
export function SpanDetail({
  spanId,
  node,
  model,
  logs,
  logsAvailable,
  tab,
  onTab,
  onClose,
  onSelect,
}: {
  spanId: string;
  node: SpanNode | undefined;
  model: TraceModel;
  logs: TraceLogRecord[];
  logsAvailable: boolean;
  tab: SpanTab;
  onTab: (tab: SpanTab) => void;
  onClose: () => void;
  onSelect: (spanId: string) => void;
}) {
  const span = node?.span;
  const errors = useMemo(() => (span ? spanErrors(span) : []), [span]);
  const baggage = useMemo(() => (span ? spanBaggage(span) : []), [span]);
  const records = useMemo(() => spanLogs(logs, spanId), [logs, spanId]);
  const [tagFilter, setTagFilter] = useState('');

  if (!node || !span) {
    return (
      <aside className="detail trc-span-detail" aria-label="Span not found" data-testid="span-detail">
        <div className="detail-header">
          <h2 className="code-id">{spanId}</h2>
          <button type="button" className="btn ghost small close" aria-label="Close" onClick={onClose}>
            <X size={14} aria-hidden="true" />
          </button>
        </div>
        <p className="muted">This trace holds no span with this id.</p>
      </aside>
    );
  }

  const counts: Record<SpanTab, number | undefined> = {
    info: undefined,
    tags: span.attributes.length,
    logs: records.length,
    errors: errors.length,
    baggage: baggage.length,
  };
  const parent = node.parent === -1 ? undefined : model.nodes[node.parent];
  const tagsShown =
    tagFilter.trim() === '' ? span.attributes : span.attributes.filter(([k, v]) => `${k}=${v}`.toLowerCase().includes(tagFilter.trim().toLowerCase()));

  return (
    <aside className="detail trc-span-detail" aria-label={`Span ${span.name}`} data-testid="span-detail">
      <div className="detail-header">
        <div className="trc-span-title">
          <h2 className="mono">{span.name}</h2>
          <p className="detail-sub small muted">
            {span.service_name} · {formatNs(node.end - node.start)} <StatusBadge status={span.status} />
          </p>
        </div>
        <button type="button" className="btn ghost small close" aria-label="Close the span" onClick={onClose} data-testid="close-span">
          <X size={14} aria-hidden="true" />
        </button>
      </div>
      <Tabs.Root value={tab} onValueChange={(v) => onTab(v as SpanTab)} className="trc-span-tabs">
        <Tabs.List className="tab-list trc-tab-list" aria-label="Span details">
          {SPAN_TABS.map((t) => (
            <Tabs.Trigger key={t} value={t} className="tab" data-testid={`span-tab-${t}`}>
              {TAB_LABEL[t]}
              {counts[t] ? <span className={`trc-tab-count${t === 'errors' ? ' error' : ''}`}>{counts[t]}</span> : null}
            </Tabs.Trigger>
          ))}
        </Tabs.List>
        <Tabs.Content value="info" className="trc-span-panel" data-testid="span-panel-info">
          <dl className="grid-info">
            <dt>Name</dt>
            <dd className="mono">{span.name}</dd>
            <dt>Span ID</dt>
            <dd>
              <span className="id-line">
                <span className="code-id">{span.span_id}</span>
                <CopyButton text={span.span_id} label="Copy the span id" />
              </span>
            </dd>
            <dt>Parent</dt>
            <dd>
              {parent ? (
                <button type="button" className="btn ghost small trc-link" onClick={() => onSelect(parent.span.span_id)}>
                  <span className="code-id">{parent.span.span_id}</span> <span className="muted">{parent.span.name}</span>
                </button>
              ) : span.parent_span_id ? (
                <span title="The parent span is not kept (a caller outside Flint, or dropped)">
                  <span className="code-id">{span.parent_span_id}</span> <span className="muted">(not kept)</span>
                </span>
              ) : (
                <span className="muted">none (the trace's first span)</span>
              )}
            </dd>
            <dt>Trace ID</dt>
            <dd className="code-id">{span.trace_id}</dd>
            <dt>Service</dt>
            <dd>{span.service_name}</dd>
            <dt>Start</dt>
            <dd>
              {isoNs(span.start_time_unix_nano)} <span className="muted">(+{formatNs(node.start)})</span>
            </dd>
            <dt>End</dt>
            <dd>
              {isoNs(span.end_time_unix_nano)} <span className="muted">(+{formatNs(node.end)})</span>
            </dd>
            <dt>Duration</dt>
            <dd data-testid="span-duration">{formatNs(node.end - node.start)}</dd>
            <dt>Self time</dt>
            <dd>{formatNs(node.self)}</dd>
            <dt>Status</dt>
            <dd>
              <StatusBadge status={span.status} />
              {span.status_description && <span className="trc-status-desc"> {span.status_description}</span>}
            </dd>
            <dt>Children</dt>
            <dd>
              {node.children.length} direct, {node.descendants} in all
            </dd>
            <dt>Critical path</dt>
            <dd>{node.critical ? 'yes: the trace waited for it' : 'no'}</dd>
            {span.instrumentation_scope_name && (
              <>
                <dt>Scope</dt>
                <dd>
                  {span.instrumentation_scope_name}
                  {span.instrumentation_scope_version ? ` ${span.instrumentation_scope_version}` : ''}
                </dd>
              </>
            )}
            {span.events.length > 0 && (
              <>
                <dt>Events</dt>
                <dd>{span.events.map((e) => e.name).join(', ')}</dd>
              </>
            )}
            {span.links.length > 0 && (
              <>
                <dt>Links</dt>
                <dd>
                  {span.links.map((l) => (
                    <div key={`${l.trace_id}:${l.span_id}`} className="code-id small">
                      {l.trace_id} / {l.span_id}
                    </div>
                  ))}
                </dd>
              </>
            )}
          </dl>
        </Tabs.Content>
        <Tabs.Content value="tags" className="trc-span-panel" data-testid="span-panel-tags">
          {span.attributes.length === 0 ? (
            <p className="muted">This span has no attributes.</p>
          ) : (
            <>
              <input
                className="input trc-tag-filter"
                type="search"
                placeholder="Filter attributes"
                aria-label="Filter attributes"
                value={tagFilter}
                onChange={(e) => setTagFilter(e.target.value)}
              />
              <KeyValueTable rows={tagsShown} />
            </>
          )}
        </Tabs.Content>
        <Tabs.Content value="logs" className="trc-span-panel" data-testid="span-panel-logs">
          {!logsAvailable ? (
            <p className="muted">The engine keeps no log records (flint-observability with logs_exporter memory or both keeps them).</p>
          ) : records.length === 0 ? (
            <p className="muted">No log record carries this span's id.</p>
          ) : (
            <ol className="trc-logs">
              {records.map((r, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: records have no id; their order is fixed
                <li key={i} className="trc-log" data-testid="span-log">
                  <div className="trc-log-head">
                    <span className={`badge ${severityClass(r.severity_number)}`}>{r.severity_text || `#${r.severity_number}`}</span>
                    <span className="small muted">
                      {r.timestamp_unix_nano > 0 ? `+${formatNs(r.timestamp_unix_nano - model.startNs)}` : ''} · {r.service_name}
                    </span>
                  </div>
                  <div className="trc-log-body">{r.body}</div>
                  {Object.keys(r.attributes).length > 0 && (
                    <details>
                      <summary className="small muted">Attributes</summary>
                      <JsonView value={r.attributes} maxHeight={200} />
                    </details>
                  )}
                </li>
              ))}
            </ol>
          )}
        </Tabs.Content>
        <Tabs.Content value="errors" className="trc-span-panel" data-testid="span-panel-errors">
          {errors.length === 0 ? (
            <p className="muted">{span.status === 'error' ? 'This span failed but recorded no details.' : 'No error in this span.'}</p>
          ) : (
            errors.map((e, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: errors have no id; their order is fixed
              <div key={i} className="card result error trc-error" data-testid="span-error">
                <div className="trc-error-head">
                  <strong className="error-code">{e.type ?? 'error'}</strong>
                  <span className="small muted">{e.source === 'status' ? 'status description' : 'exception event'}</span>
                </div>
                {e.message && <div className="trc-error-message">{e.message}</div>}
                {e.stacktrace && <pre className="json trc-stack-trace">{e.stacktrace}</pre>}
              </div>
            ))
          )}
        </Tabs.Content>
        <Tabs.Content value="baggage" className="trc-span-panel" data-testid="span-panel-baggage">
          {baggage.length === 0 ? (
            <div>
              <p>No baggage.</p>
              <p className="muted small">
                Flint passes W3C baggage along with every call but does not write it on its spans. A span shows baggage here when the code that made it copied
                the entries into attributes named <code>baggage.&lt;key&gt;</code> (or a <code>baggage</code> attribute holding the header).
              </p>
            </div>
          ) : (
            <KeyValueTable rows={baggage} />
          )}
        </Tabs.Content>
      </Tabs.Root>
    </aside>
  );
}

/** Key/value pairs (attributes, baggage) as a two-column table; keys may repeat. */
function KeyValueTable({ rows }: { rows: [string, string][] }) {
  return (
    <table className="table trc-kv">
      <thead>
        <tr>
          <th scope="col">Key</th>
          <th scope="col">Value</th>
        </tr>
      </thead>
      <tbody>
        {rows.map(([k, v], i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: keys may repeat; the position tells them apart
          <tr key={`${k}#${i}`}>
            <td className="mono">{k}</td>
            <td className="mono trc-kv-value">{v}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
