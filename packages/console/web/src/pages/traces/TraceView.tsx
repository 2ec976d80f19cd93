import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { ArrowLeft, RefreshCw } from 'lucide-react';
import { Tabs } from 'radix-ui';
import { useMemo } from 'react';
import type { TraceDetailResponse } from '../../../../src/api-types.js';
import { CopyButton } from '../../components/CopyButton.js';
import { EmptyState } from '../../components/EmptyState.js';
import { ErrorBox } from '../../components/ErrorBox.js';
import { ApiRequestError, api, seg } from '../../lib/api.js';
import { absoluteTime } from '../../lib/format.js';
import { LoadingLine } from '../PageStatus.js';
import { serviceColorVar } from './colors.js';
import { FlameGraph } from './FlameGraph.js';
import { TRACE_VIEWS, type TracesSearch, type TraceView as View, withoutFilters } from './model/filters.js';
import { formatNs } from './model/format.js';
import { buildTraceModel } from './model/tree.js';
import { ServiceBreakdown } from './ServiceBreakdown.js';
import { SpanDetail } from './SpanDetail.js';
import { StatusBadge } from './StatusBadge.js';
import { TraceMapView } from './TraceMapView.js';
import { Unavailable } from './Unavailable.js';
import { Waterfall } from './Waterfall.js';

const VIEW_LABEL: Record<View, string> = { waterfall: 'Waterfall', flame: 'Flame graph', services: 'Service breakdown', map: 'Trace map' };

/** A trace that may still gain spans is read again this often (small traces only), for this long after its last span ended. */
const REFRESH_MS = 3000;
const YOUNG_MS = 30_000;
const REFRESH_MAX_SPANS = 2000;

/** One trace: its summary, the four views and the selected span's details. */
export function TraceView({
  traceId,
  search,
  update,
}: {
  traceId: string;
  search: TracesSearch;
  update: (patch: Partial<TracesSearch>, replace?: boolean) => void;
}) {
  const detail = useQuery({
    queryKey: ['trace', traceId],
    queryFn: () => api.get<TraceDetailResponse>(`_console/traces/${seg(traceId)}`),
    refetchInterval: (q) => {
      const d = q.state.data;
      if (!d?.available || d.spans.length > REFRESH_MAX_SPANS) return false;
      const lastEnd = Math.max(0, ...d.spans.map((s) => s.end_time_unix_nano / 1e6));
      return Date.now() - lastEnd < YOUNG_MS ? REFRESH_MS : false;
    },
    retry: (count, err) => !(err instanceof ApiRequestError && err.status === 404) && count < 2,
  });
  const model = useMemo(() => (detail.data?.available ? buildTraceModel(detail.data.spans) : undefined), [detail.data]);
  const view = search.view ?? 'waterfall';
  const selectedIndex = search.span !== undefined ? model?.byId.get(search.span) : undefined;
  const selected = selectedIndex !== undefined ? model?.nodes[selectedIndex] : undefined;
  const select = (spanId: string | undefined) => update({ span: spanId, tab: spanId === undefined ? undefined : search.tab }, false);
  const serviceIndex = useMemo(() => new Map((model?.services ?? []).map((s, i) => [s, i])), [model]);

  const back = { ...search, trace: undefined, span: undefined, view: undefined, tab: undefined };
  const root = model && model.roots.length > 0 ? model.nodes[model.roots[0]!] : undefined;

  return (
    <div className="trc-trace" data-testid="trace-view">
      <div className="trc-trace-head">
        <div className="trc-trace-top">
          <Link to="/traces" search={back} className="btn small" data-testid="back-to-list">
            <ArrowLeft size={14} aria-hidden="true" /> Traces
          </Link>
          <div className="trc-trace-title">
            <h2 className="mono">{root?.span.name ?? 'Trace'}</h2>
            <span className="id-line small muted">
              <span className="code-id">{traceId}</span>
              <CopyButton text={traceId} label="Copy the trace id" />
            </span>
          </div>
          <span className="spacer" />
          <button type="button" className="btn small" onClick={() => void detail.refetch()} disabled={detail.isFetching} title="Read the trace again">
            <RefreshCw size={14} aria-hidden="true" /> Refresh
          </button>
        </div>
        {model && root && (
          <dl className="trc-trace-stats small">
            <div>
              <dt>Duration</dt>
              <dd data-testid="trace-duration">{formatNs(model.durationNs)}</dd>
            </div>
            <div>
              <dt>Spans</dt>
              <dd data-testid="trace-span-count">{model.nodes.length.toLocaleString()}</dd>
            </div>
            <div>
              <dt>Depth</dt>
              <dd>{model.maxDepth + 1}</dd>
            </div>
            <div>
              <dt>Errors</dt>
              <dd>{model.errorCount > 0 ? <span className="badge error">{model.errorCount}</span> : 0}</dd>
            </div>
            <div>
              <dt>Status</dt>
              <dd>
                <StatusBadge status={root.span.status} />
              </dd>
            </div>
            <div>
              <dt>Started</dt>
              <dd title={absoluteTime(model.startNs / 1e6)}>{new Date(model.startNs / 1e6).toLocaleTimeString()}</dd>
            </div>
            <div className="trc-services">
              <dt>Services</dt>
              <dd>
                {model.services.map((s) => (
                  <span key={s} className="trc-service-tag">
                    <span className="trc-swatch" style={{ background: serviceColorVar(serviceIndex.get(s) ?? 0) }} aria-hidden="true" />
                    {s}
                  </span>
                ))}
              </dd>
            </div>
          </dl>
        )}
      </div>
      {detail.isPending ? (
        <LoadingLine />
      ) : detail.error instanceof ApiRequestError && detail.error.code === 'trace_not_found' ? (
        <EmptyState title="This trace is not kept">
          <p>{detail.error.message}</p>
          <Link to="/traces" search={withoutFilters(back)} className="btn">
            Back to the list
          </Link>
        </EmptyState>
      ) : !detail.data ? (
        <div className="page-error">
          <ErrorBox error={detail.error} />
        </div>
      ) : !detail.data.available ? (
        <Unavailable detail={detail.data.detail} />
      ) : model ? (
        <div className="trc-trace-body">
          <Tabs.Root
            className="trc-views"
            value={view}
            onValueChange={(v) => update({ view: v === 'waterfall' ? undefined : (v as View) }, true)}
            activationMode="manual"
          >
            <Tabs.List className="tab-list trc-tab-list" aria-label="Trace views">
              {TRACE_VIEWS.map((v) => (
                <Tabs.Trigger key={v} value={v} className="tab" data-testid={`view-${v}`}>
                  {VIEW_LABEL[v]}
                </Tabs.Trigger>
              ))}
            </Tabs.List>
            <Tabs.Content value="waterfall" className="trc-view-panel">
              <Waterfall model={model} selected={selectedIndex} onSelect={select} serviceIndex={serviceIndex} />
            </Tabs.Content>
            <Tabs.Content value="flame" className="trc-view-panel">
              <FlameGraph model={model} selected={selectedIndex} onSelect={select} serviceIndex={serviceIndex} />
            </Tabs.Content>
            <Tabs.Content value="services" className="trc-view-panel trc-scroll">
              <ServiceBreakdown model={model} serviceIndex={serviceIndex} />
            </Tabs.Content>
            <Tabs.Content value="map" className="trc-view-panel trc-scroll">
              <TraceMapView model={model} serviceIndex={serviceIndex} onSelect={select} selected={selectedIndex} />
            </Tabs.Content>
          </Tabs.Root>
          {search.span !== undefined && (
            <SpanDetail
              key={search.span}
              spanId={search.span}
              node={selected}
              model={model}
              logs={detail.data.logs}
              logsAvailable={detail.data.logs_available}
              tab={search.tab ?? 'info'}
              onTab={(tab) => update({ tab: tab === 'info' ? undefined : tab })}
              onClose={() => select(undefined)}
              onSelect={select}
            />
          )}
        </div>
      ) : null}
    </div>
  );
}
