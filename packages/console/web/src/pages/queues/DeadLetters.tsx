import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { RotateCcw, Trash2 } from 'lucide-react';
import { useState } from 'react';
import type { DeadLetter, DeadLettersResponse, QueueStats } from '../../../../src/api-types.js';
import { ConfirmDialog } from '../../components/ConfirmDialog.js';
import { EmptyState } from '../../components/EmptyState.js';
import { ErrorBox } from '../../components/ErrorBox.js';
import { JsonView } from '../../components/JsonView.js';
import { api, seg } from '../../lib/api.js';
import { ActionError } from '../triggers/InvokeResult.js';
import { failedAt, messages } from './model.js';

const LIMIT = 50;

type Outcome = { ok: boolean; text: string };
type MessageAction = { kind: 'redrive' | 'discard'; id: string };

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const field = (r: unknown, k: string): unknown => (r && typeof r === 'object' ? (r as Record<string, unknown>)[k] : undefined);

/** A dead letter's error: its message when it has one, the whole value on demand. */
function ErrorValue({ error }: { error: unknown }) {
  if (error === null || error === undefined) return <span className="muted">—</span>;
  if (typeof error === 'string') return <pre className="json q-error">{error}</pre>;
  const code = field(error, 'code');
  const message = field(error, 'message');
  return (
    <div className="q-error-box">
      {typeof message === 'string' && (
        <p className="error-text q-error-line">
          {typeof code === 'string' && <span className="badge error">{code}</span>} {message}
        </p>
      )}
      {typeof message === 'string' ? (
        <details>
          <summary className="small">Whole error</summary>
          <JsonView value={error} label="Error" maxHeight={200} />
        </details>
      ) : (
        <JsonView value={error} label="Error" maxHeight={200} />
      )}
    </div>
  );
}

function DeadLetterItem({
  m,
  busy,
  onRedrive,
  onDiscard,
}: {
  m: DeadLetter;
  busy: MessageAction['kind'] | undefined;
  onRedrive: () => void;
  onDiscard: () => void;
}) {
  return (
    <li className="card q-dead" data-testid="dead-letter-row" data-message-id={m.id}>
      <div className="q-dead-head">
        <span className="code-id q-dead-id" title={m.id}>
          {m.id}
        </span>
        <button type="button" className="btn small" data-testid="redrive-button" disabled={busy !== undefined} onClick={onRedrive}>
          <RotateCcw size={13} aria-hidden="true" />
          {busy === 'redrive' ? 'Redriving…' : 'Redrive'}
        </button>
        <button type="button" className="btn small danger" data-testid="discard-button" disabled={busy !== undefined} onClick={onDiscard}>
          <Trash2 size={13} aria-hidden="true" />
          {busy === 'discard' ? 'Discarding…' : 'Discard'}
        </button>
      </div>
      <dl className="grid-info small">
        <dt>Function</dt>
        <dd className="code-id">{m.function_id ?? <span className="muted">—</span>}</dd>
        <dt>Attempts</dt>
        <dd>{m.retries}</dd>
        <dt>Failed at</dt>
        <dd>{failedAt(m.failed_at)}</dd>
        <dt>Size</dt>
        <dd>{m.size_bytes} bytes</dd>
      </dl>
      <div className="field">
        <span className="muted small">Error</span>
        <ErrorValue error={m.error} />
      </div>
      <details>
        <summary className="small">Payload</summary>
        <JsonView value={m.payload} label={`Payload of ${m.id}`} maxHeight={260} />
      </details>
    </li>
  );
}

/** A queue's dead letters (refreshed every 3 s while shown), with Redrive, Discard and Redrive all. */
export function DeadLetters({ queue }: { queue: QueueStats }) {
  const name = queue.name;
  const queryClient = useQueryClient();
  const listKey = ['queue-dead', name];
  const dead = useQuery({
    queryKey: listKey,
    queryFn: () => api.get<DeadLettersResponse>(`_console/queues/${seg(name)}/dead?offset=0&limit=${LIMIT}`),
    refetchInterval: 3000,
  });
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [confirmAll, setConfirmAll] = useState(false);
  const [discarding, setDiscarding] = useState<DeadLetter | null>(null);

  const refresh = () =>
    Promise.all([queryClient.invalidateQueries({ queryKey: ['queues'] }), queryClient.invalidateQueries({ queryKey: ['queue-dead', name] })]);

  const redriveAll = useMutation({
    mutationFn: () => api.post<unknown>(`_console/queues/${seg(name)}/redrive`),
    onMutate: () => setOutcome(null),
    onSuccess: (res) => {
      const n = num(field(res, 'redriven')) ?? 0;
      const unrouted = num(field(res, 'unrouted_redriven')) ?? 0;
      setOutcome({ ok: true, text: `Redrove ${messages(n)}${unrouted > 0 ? ` and ${unrouted} unrouted` : ''} of ${name}.` });
    },
    onSettled: refresh,
  });

  const act = useMutation({
    mutationFn: (a: MessageAction) =>
      a.kind === 'redrive'
        ? api.post<unknown>(`_console/queues/${seg(name)}/dead/${seg(a.id)}/redrive`)
        : api.delete<unknown>(`_console/queues/${seg(name)}/dead/${seg(a.id)}`),
    onMutate: () => setOutcome(null),
    onSuccess: (res, a) => {
      const count = num(field(res, a.kind === 'redrive' ? 'redriven' : 'discarded'));
      if (count === 0) setOutcome({ ok: false, text: `Message ${a.id} is no longer in the dead letters (already redriven or discarded).` });
      else setOutcome({ ok: true, text: a.kind === 'redrive' ? `Redrove message ${a.id}.` : `Discarded message ${a.id}.` });
    },
    onSettled: refresh,
  });

  const list = dead.data?.messages ?? [];
  const total = Math.max(queue.dead, list.length);
  const busyFor = (id: string) => (act.isPending && act.variables?.id === id ? act.variables.kind : undefined);

  return (
    <div className="section">
      <div className="q-dead-toolbar">
        <span className="muted small">
          {messages(queue.dead)} dead{list.length >= LIMIT ? ` (the first ${LIMIT} shown)` : ''}
        </span>
        <span className="q-spacer" />
        <button
          type="button"
          className="btn small"
          data-testid="redrive-all"
          disabled={redriveAll.isPending || (total === 0 && !queue.unrouted)}
          onClick={() => setConfirmAll(true)}
        >
          <RotateCcw size={13} aria-hidden="true" />
          {redriveAll.isPending ? 'Redriving…' : 'Redrive all'}
        </button>
      </div>
      {queue.unrouted ? (
        <p className="muted small">
          {messages(queue.unrouted)} published while no function subscribed wait unrouted; Redrive all hands them to the subscribers too.
        </p>
      ) : null}
      {outcome && (
        <div className={`card result ${outcome.ok ? 'ok' : 'error'}`} data-testid="action-result" role="status">
          {outcome.text}
        </div>
      )}
      <ActionError error={redriveAll.error ?? act.error} />
      {dead.isPending ? (
        <p className="muted">Loading…</p>
      ) : dead.error && !dead.data ? (
        <ErrorBox error={dead.error} />
      ) : list.length === 0 ? (
        <EmptyState title="No dead letters">Messages that exhaust their retries land here.</EmptyState>
      ) : (
        <ul className="q-dead-list">
          {list.map((m) => (
            <DeadLetterItem
              key={m.id}
              m={m}
              busy={busyFor(m.id)}
              onRedrive={() => act.mutate({ kind: 'redrive', id: m.id })}
              onDiscard={() => setDiscarding(m)}
            />
          ))}
        </ul>
      )}
      <ConfirmDialog
        open={confirmAll}
        title={`Redrive all ${total} messages of ${name}?`}
        confirmLabel="Redrive all"
        onCancel={() => setConfirmAll(false)}
        onConfirm={() => {
          setConfirmAll(false);
          redriveAll.mutate();
        }}
      >
        Each dead letter goes back to its function&apos;s queue and is handled again, with its retries reset.
      </ConfirmDialog>
      <ConfirmDialog
        open={discarding !== null}
        title={`Discard message ${discarding?.id ?? ''}?`}
        confirmLabel="Discard"
        danger
        onCancel={() => setDiscarding(null)}
        onConfirm={() => {
          const m = discarding;
          setDiscarding(null);
          if (m) act.mutate({ kind: 'discard', id: m.id });
        }}
      >
        The message is deleted for good; it will not be handled.
      </ConfirmDialog>
    </div>
  );
}
