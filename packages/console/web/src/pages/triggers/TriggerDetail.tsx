import { Link } from '@tanstack/react-router';
import { X } from 'lucide-react';
import type { FunctionInfo, TriggerInfo, TriggerTypeInfo } from '../../../../src/api-types.js';
import { CopyButton } from '../../components/CopyButton.js';
import { JsonView } from '../../components/JsonView.js';
import { PublishForm } from '../queues/PublishForm.js';
import { CronPanel } from './CronPanel.js';
import { EmitPanel } from './EmitPanel.js';
import { HttpRequestBuilder } from './HttpRequestBuilder.js';
import { configString, isModuleType } from './model.js';

/** A trigger's status as a badge (with the error text for `error`). */
export function StatusBadge({ trigger, verbose }: { trigger: TriggerInfo; verbose?: boolean }) {
  if (trigger.status === 'parked')
    return (
      <span className="badge warn" title={`Type ${trigger.trigger_type} is not provided yet: the trigger waits for it`}>
        parked
      </span>
    );
  if (trigger.status === 'error')
    return (
      <span className="badge error tr-error-badge" title={trigger.error}>
        error{trigger.error ? `: ${trigger.error}` : ''}
      </span>
    );
  return verbose ? <span className="badge ok">active</span> : null;
}

function StateExplain({ trigger }: { trigger: TriggerInfo }) {
  const scope = configString(trigger, 'scope');
  const key = configString(trigger, 'key');
  return (
    <section className="section">
      <h3>When it fires</h3>
      <p>
        Runs <span className="code-id">{trigger.function_id}</span> after every <code>state:created</code>, <code>state:updated</code> and{' '}
        <code>state:deleted</code>{' '}
        {scope ? (
          <>
            in scope <span className="code-id">{scope}</span>
          </>
        ) : (
          'in every scope'
        )}
        {key ? (
          <>
            {' '}
            for key <span className="code-id">{key}</span>
          </>
        ) : null}
        . The function gets <code>{'{event_type, scope, key, old_value, new_value}'}</code>.
      </p>
      {scope && (
        <p>
          <Link to="/states" search={{ scope, key }}>
            Edit a key in this scope
          </Link>
        </p>
      )}
    </section>
  );
}

function Explain({ trigger, typeInfo }: { trigger: TriggerInfo; typeInfo: TriggerTypeInfo | undefined }) {
  const stream = configString(trigger, 'stream_name');
  let text: string;
  switch (trigger.trigger_type) {
    case 'stream':
      text = `Fires with every change and custom event of ${stream ? `stream ${stream}` : 'the stream'}${configString(trigger, 'group_id') ? `, group ${configString(trigger, 'group_id')}` : ''}${configString(trigger, 'item_id') ? `, item ${configString(trigger, 'item_id')}` : ''}.`;
      break;
    case 'stream:join':
      text = `Runs when a client joins a group or item of ${stream ? `stream ${stream}` : 'any stream'}; the function can answer {unauthorized: true} to refuse it.`;
      break;
    case 'stream:leave':
      text = `Runs when a client leaves a subscription of ${stream ? `stream ${stream}` : 'any stream'} or disconnects.`;
      break;
    case 'log': {
      const level = configString(trigger, 'level');
      const min = configString(trigger, 'min_level');
      text = `Fires for each stored log record${min ? ` at level ${min} or above` : level && level !== 'all' ? ` at level ${level}` : ', whatever its level'}.`;
      break;
    }
    default:
      text = typeInfo?.description || `Fires when the provider of type ${trigger.trigger_type} fires it.`;
  }
  return (
    <section className="section">
      <h3>When it fires</h3>
      <p>{text}</p>
    </section>
  );
}

/** The panel for one type: what the console can do with it. */
function TypePanel({ trigger, typeInfo }: { trigger: TriggerInfo; typeInfo: TriggerTypeInfo | undefined }) {
  const topic = configString(trigger, 'topic');
  switch (trigger.trigger_type) {
    case 'http':
      return <HttpRequestBuilder trigger={trigger} />;
    case 'cron':
      return <CronPanel trigger={trigger} />;
    case 'state':
      return <StateExplain trigger={trigger} />;
    case 'durable:subscriber':
      return topic ? (
        <>
          <PublishForm topic={topic} />
          <p>
            <Link to="/queues" search={{ queue: topic }}>
              Open queue {topic}
            </Link>
          </p>
        </>
      ) : (
        <p className="muted">This trigger has no topic.</p>
      );
    case 'subscribe':
      return (
        <EmitPanel
          trigger={trigger}
          intro={`Publishes the payload to topic ${topic ?? '?'}: every subscribe trigger of the topic receives it, not only this one.`}
        />
      );
    default:
      if (!isModuleType(trigger.trigger_type)) {
        return (
          <>
            {typeInfo?.description && (
              <section className="section">
                <h3>When it fires</h3>
                <p>{typeInfo.description}</p>
              </section>
            )}
            <EmitPanel
              trigger={trigger}
              intro={
                typeInfo
                  ? `Type ${trigger.trigger_type} is defined by a worker; Emit calls ${trigger.function_id} with the payload, as the type's provider would.`
                  : `Nobody provides type ${trigger.trigger_type} yet (a typo, or its worker is not running); Emit calls ${trigger.function_id} with the payload directly.`
              }
            />
          </>
        );
      }
      return <Explain trigger={trigger} typeInfo={typeInfo} />;
  }
}

/** The detail panel of the selected trigger. */
export function TriggerDetail({
  trigger,
  fn,
  typeInfo,
  onClose,
}: {
  trigger: TriggerInfo;
  fn: FunctionInfo | undefined;
  typeInfo: TriggerTypeInfo | undefined;
  onClose: () => void;
}) {
  return (
    <aside className="detail" aria-label={`Trigger ${trigger.id}`} data-testid="trigger-detail">
      <div className="detail-header">
        <h2 className="code-id">{trigger.id}</h2>
        <CopyButton text={trigger.id} label="Copy trigger id" />
        <button type="button" className="btn ghost small" aria-label="Close" onClick={onClose}>
          <X size={14} aria-hidden="true" />
        </button>
      </div>
      <dl className="grid-info">
        <dt>Type</dt>
        <dd>
          <span className="badge info">{trigger.trigger_type}</span>
          {!isModuleType(trigger.trigger_type) && <span className="muted small"> {typeInfo ? 'worker-defined' : 'not provided by anyone'}</span>}
        </dd>
        <dt>Function</dt>
        <dd>
          <Link to="/functions" search={{ fn: trigger.function_id }} className="code-id">
            {trigger.function_id}
          </Link>
          {fn?.description && <div className="muted small">{fn.description}</div>}
        </dd>
        <dt>Status</dt>
        <dd>
          <StatusBadge trigger={trigger} verbose />
          {trigger.status === 'parked' && (
            <div className="muted small">
              Type <span className="code-id">{trigger.trigger_type}</span> is not provided yet; the trigger starts when a module or worker provides it.
            </div>
          )}
        </dd>
      </dl>
      <section className="section">
        <h3>Config</h3>
        <JsonView value={trigger.config} label="Trigger config" maxHeight={220} />
      </section>
      {trigger.metadata && Object.keys(trigger.metadata).length > 0 && (
        <details>
          <summary>Metadata</summary>
          <JsonView value={trigger.metadata} label="Trigger metadata" maxHeight={220} />
        </details>
      )}
      <TypePanel trigger={trigger} typeInfo={typeInfo} />
    </aside>
  );
}
