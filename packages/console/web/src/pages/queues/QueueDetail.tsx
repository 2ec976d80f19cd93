import { X } from 'lucide-react';
import { Tabs } from 'radix-ui';
import type { QueueStats } from '../../../../src/api-types.js';
import { CopyButton } from '../../components/CopyButton.js';
import { JsonView } from '../../components/JsonView.js';
import { DeadLetters } from './DeadLetters.js';
import { kindLabel, rateParts } from './model.js';
import { PublishForm } from './PublishForm.js';

export type QueueTab = 'overview' | 'dead';

function Stat({ label, value, tone }: { label: string; value: number | undefined; tone?: 'error' | 'warn' }) {
  return (
    <div className={`card q-stat${tone && value ? ` q-stat-${tone}` : ''}`}>
      <span className="muted small">{label}</span>
      <strong className="q-stat-value">{value ?? '—'}</strong>
    </div>
  );
}

function Overview({ queue }: { queue: QueueStats }) {
  const rates = rateParts(queue.rates);
  return (
    <div className="section q-overview">
      <div className="q-stats">
        <Stat label="Depth" value={queue.depth} />
        <Stat label="Waiting" value={queue.waiting} />
        <Stat label="In flight" value={queue.in_flight} />
        <Stat label="Delayed" value={queue.delayed} />
        <Stat label="Dead" value={queue.dead} tone="error" />
        {queue.kind === 'topic' && <Stat label="Unrouted" value={queue.unrouted ?? 0} tone="warn" />}
        <Stat label="Consumers" value={queue.consumer_count} />
      </div>
      {rates.length > 0 && (
        <p className="small q-rates-line">
          <span className="muted">Per second, last minute:</span>{' '}
          {rates.map((r) => (
            <span key={r.name} className="q-rate">
              {r.name} <strong>{r.text}</strong>
            </span>
          ))}
        </p>
      )}
      {queue.subscribers && (
        <section className="section">
          <h3>Subscribers</h3>
          {queue.subscribers.length === 0 ? (
            <p className="muted small">No function subscribes to this topic: what is published waits unrouted until one does.</p>
          ) : (
            <table className="table q-subs">
              <thead>
                <tr>
                  <th scope="col">Function</th>
                  <th scope="col" className="q-num">
                    Waiting
                  </th>
                  <th scope="col" className="q-num">
                    In flight
                  </th>
                  <th scope="col" className="q-num">
                    Delayed
                  </th>
                  <th scope="col" className="q-num">
                    Dead
                  </th>
                  <th scope="col" className="q-num">
                    Consumers
                  </th>
                </tr>
              </thead>
              <tbody>
                {queue.subscribers.map((s, n) => (
                  <tr key={s.function_id ?? `#${n}`}>
                    <td className="code-id">{s.function_id ?? <span className="muted">?</span>}</td>
                    <td className="q-num">{s.waiting}</td>
                    <td className="q-num">{s.in_flight}</td>
                    <td className="q-num">{s.delayed}</td>
                    <td className="q-num">{s.dead > 0 ? <span className="badge error">{s.dead}</span> : 0}</td>
                    <td className="q-num">{s.consumers}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      )}
      <section className="section">
        <h3>Config</h3>
        {queue.config === null || queue.config === undefined ? (
          <p className="muted small">
            {queue.kind === 'topic' ? 'Each subscriber sets its own delivery settings (queue_config of its trigger).' : 'No config.'}
          </p>
        ) : (
          <JsonView value={queue.config} label="Queue config" maxHeight={220} />
        )}
      </section>
      {queue.kind === 'topic' && <PublishForm topic={queue.name} />}
    </div>
  );
}

/** The selected queue: Overview (stats, subscribers, config, publish) and Dead letters. */
export function QueueDetail({ queue, tab, onTab, onClose }: { queue: QueueStats; tab: QueueTab; onTab: (tab: QueueTab) => void; onClose: () => void }) {
  return (
    <aside className="detail q-detail" aria-label={`Queue ${queue.name}`} data-testid="queue-detail">
      <div className="detail-header">
        <h2 className="code-id">{queue.name}</h2>
        <CopyButton text={queue.name} label="Copy queue name" />
        <button type="button" className="btn ghost small" aria-label="Close" onClick={onClose}>
          <X size={14} aria-hidden="true" />
        </button>
      </div>
      <div className="q-meta">
        <span className={`badge${queue.kind === 'topic' ? ' info' : ''}`}>{kindLabel(queue.kind)}</span>
        <span className="muted small">broker {queue.broker_type}</span>
      </div>
      <Tabs.Root value={tab} onValueChange={(v) => onTab(v === 'dead' ? 'dead' : 'overview')} className="q-tabs">
        <Tabs.List className="tab-list" aria-label="Queue views">
          <Tabs.Trigger value="overview" className="tab">
            Overview
          </Tabs.Trigger>
          <Tabs.Trigger value="dead" className="tab" data-testid="dead-letters-tab">
            Dead letters
            {queue.dead > 0 && <span className="badge error">{queue.dead}</span>}
          </Tabs.Trigger>
        </Tabs.List>
        <Tabs.Content value="overview" className="tab-panel">
          <Overview queue={queue} />
        </Tabs.Content>
        <Tabs.Content value="dead" className="tab-panel">
          <DeadLetters queue={queue} />
        </Tabs.Content>
      </Tabs.Root>
    </aside>
  );
}
