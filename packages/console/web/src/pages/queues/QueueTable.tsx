import type { QueueStats } from '../../../../src/api-types.js';
import { kindLabel, rateParts } from './model.js';

/** The rates the table shows, with their short names (the title and the detail show every rate). */
const SHORT: Record<string, string> = { published: 'pub', handled: 'done', failed: 'fail' };

/** Every topic and named queue with its counts; a row selects the queue. */
export function QueueTable({ queues, selected, onSelect }: { queues: QueueStats[]; selected: string | undefined; onSelect: (name: string) => void }) {
  return (
    <table className="table q-table">
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Kind</th>
          <th scope="col">Broker</th>
          <th scope="col" className="q-num">
            Depth
          </th>
          <th scope="col" className="q-num">
            In flight
          </th>
          <th scope="col" className="q-num">
            Delayed
          </th>
          <th scope="col" className="q-num">
            Dead letters
          </th>
          <th scope="col" className="q-num">
            Unrouted
          </th>
          <th scope="col" className="q-num">
            Consumers
          </th>
          <th scope="col" title="Per second over the last minute: published, handled, failed">
            Rates
          </th>
        </tr>
      </thead>
      <tbody>
        {queues.map((q) => {
          const rates = rateParts(q.rates);
          const tableRates = rates.filter((r) => r.name in SHORT);
          return (
            <tr key={q.name} className={`q-row${q.name === selected ? ' selected' : ''}`} data-testid="queue-row" data-queue={q.name}>
              <td className="q-name">
                <button type="button" className="row-button code-id" aria-current={q.name === selected ? 'true' : undefined} onClick={() => onSelect(q.name)}>
                  {q.name}
                </button>
              </td>
              <td>
                <span className={`badge${q.kind === 'topic' ? ' info' : ''}`}>{kindLabel(q.kind)}</span>
              </td>
              <td className="muted">{q.broker_type}</td>
              <td className="q-num">{q.depth}</td>
              <td className="q-num">{q.in_flight}</td>
              <td className="q-num">{q.delayed}</td>
              <td className="q-num">{q.dead > 0 ? <span className="badge error">{q.dead}</span> : <span className="muted">0</span>}</td>
              <td className="q-num">
                {q.unrouted ? <span className="badge warn">{q.unrouted}</span> : <span className="muted">{q.kind === 'topic' ? 0 : '—'}</span>}
              </td>
              <td className="q-num">{q.consumer_count}</td>
              <td className="small q-rates" title={rates.map((r) => `${r.name} ${r.text}`).join(', ') || undefined}>
                {tableRates.length === 0 ? (
                  <span className="muted">—</span>
                ) : (
                  tableRates.map((r) => (
                    <span key={r.name} className={r.value === 0 ? 'muted' : r.name === 'failed' ? 'error-text' : ''}>
                      {SHORT[r.name] ?? r.name} {r.text}
                    </span>
                  ))
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
