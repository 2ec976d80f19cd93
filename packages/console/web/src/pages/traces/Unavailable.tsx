import { EmptyState } from '../../components/EmptyState.js';

/** Why there are no traces to show: the engine keeps none in memory. */
export function Unavailable({ detail }: { detail: string | undefined }) {
  return (
    <div data-testid="traces-unavailable">
      <EmptyState title="Traces are not available">
        <p>{detail ?? 'The engine keeps no spans in memory.'}</p>
        <p>
          Load <code>flint-observability</code> with <code>exporter: memory</code> or <code>both</code> in <code>flint-config.yaml</code>:
        </p>
        <pre className="json trc-config">
          {`modules:
  - name: flint-observability
    config:
      exporter: memory   # or both, to also send spans to a collector`}
        </pre>
      </EmptyState>
    </div>
  );
}
