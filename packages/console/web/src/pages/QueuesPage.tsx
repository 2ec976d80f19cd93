import { useNavigate, useSearch } from '@tanstack/react-router';
import { X } from 'lucide-react';
import { useId, useMemo } from 'react';
import { EmptyState } from '../components/EmptyState.js';
import { ErrorBox } from '../components/ErrorBox.js';
import { useQueues } from '../lib/queries.js';
import { PublishForm } from './queues/PublishForm.js';
import { QueueDetail } from './queues/QueueDetail.js';
import { QueueTable } from './queues/QueueTable.js';
import { useSearchText } from './triggers/useSearchText.js';
import './queues/queues.css';

/** Durable queues: every topic and named queue with its counts; the selected one's overview and dead letters. */
export function QueuesPage() {
  const search = useSearch({ from: '/queues' });
  const navigate = useNavigate({ from: '/queues' });
  const queues = useQueues();
  const filterId = useId();
  const [text, setText] = useSearchText(search.q, (q) => void navigate({ search: (s) => ({ ...s, q }), replace: true }), 150);

  const all = queues.data?.queues ?? [];
  const shown = useMemo(() => {
    const f = (search.q ?? '').trim().toLowerCase();
    return all.filter((q) => f === '' || q.name.toLowerCase().includes(f) || q.broker_type.toLowerCase().includes(f));
  }, [all, search.q]);
  const selected = search.queue ? all.find((q) => q.name === search.queue) : undefined;
  const select = (queue: string | undefined) => void navigate({ search: (s) => ({ ...s, queue, tab: queue === s.queue ? s.tab : undefined }) });
  const deadTotal = all.reduce((n, q) => n + q.dead, 0);

  return (
    <div className="page">
      <header className="page-header">
        <h1>Queues</h1>
        {queues.data?.available && <span className="badge">{all.length}</span>}
        {deadTotal > 0 && <span className="badge error">{deadTotal} dead letters</span>}
      </header>
      {queues.isPending ? (
        <p className="muted q-pad">Loading…</p>
      ) : queues.error && !queues.data ? (
        <div className="q-pad">
          <ErrorBox error={queues.error} />
        </div>
      ) : queues.data && !queues.data.available ? (
        <EmptyState title="The queue module (flint-queue) is not loaded">
          Add <code>flint-queue</code> to the engine&apos;s <code>modules</code> to get durable topics, retries and dead letters.
        </EmptyState>
      ) : (
        <>
          <div className="toolbar">
            <label htmlFor={filterId} className="sr-only">
              Filter queues
            </label>
            <input
              id={filterId}
              type="search"
              className="input q-filter"
              placeholder="Filter queues"
              data-search
              value={text}
              onChange={(e) => setText(e.target.value)}
            />
            {queues.error && <span className="error-text small">Refresh failed: {(queues.error as Error).message}</span>}
          </div>
          <div className="page-body">
            <div className="page-list">
              {all.length === 0 ? (
                <EmptyState title="No queues yet">
                  A topic appears when a worker subscribes with{' '}
                  <code>{"worker.registerTrigger({type: 'durable:subscriber', function_id, config: {topic: 'orders'}})"}</code> or publishes with{' '}
                  <code>flint::durable::publish</code>.
                </EmptyState>
              ) : shown.length === 0 ? (
                <EmptyState title={`No queue matches “${search.q ?? ''}”`}>
                  <button type="button" className="btn" onClick={() => setText('')}>
                    Clear the filter
                  </button>
                </EmptyState>
              ) : (
                <QueueTable queues={shown} selected={search.queue} onSelect={(name) => select(name)} />
              )}
            </div>
            {search.queue &&
              (selected ? (
                <QueueDetail
                  key={selected.name}
                  queue={selected}
                  tab={search.tab ?? 'overview'}
                  onTab={(tab) => void navigate({ search: (s) => ({ ...s, tab: tab === 'overview' ? undefined : tab }), replace: true })}
                  onClose={() => select(undefined)}
                />
              ) : (
                <aside className="detail" aria-label="Queue not found">
                  <div className="detail-header">
                    <h2 className="code-id">{search.queue}</h2>
                    <button type="button" className="btn ghost small" aria-label="Close" onClick={() => select(undefined)}>
                      <X size={14} aria-hidden="true" />
                    </button>
                  </div>
                  <p className="muted">
                    There is no topic or named queue with this name yet. A topic appears once a function subscribes to it or a message is published to it.
                  </p>
                  <PublishForm topic={search.queue} />
                </aside>
              ))}
          </div>
        </>
      )}
    </div>
  );
}
