import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Pencil, Trash2, X } from 'lucide-react';
import { useState } from 'react';
import { ConfirmDialog } from '../../components/ConfirmDialog.js';
import { CopyButton } from '../../components/CopyButton.js';
import { ErrorBox } from '../../components/ErrorBox.js';
import { JsonView } from '../../components/JsonView.js';
import { ActionError } from '../triggers/InvokeResult.js';
import { ItemEditor } from './ItemEditor.js';
import { deleteState, invalidateState, typeOf, useStateKey } from './model.js';

/**
 * The selected key: its value, Edit and Delete. `entry` is the key's row when it is on the page shown;
 * otherwise (a deep link) the key is looked up.
 */
export function ItemDetail({
  scope,
  stateKey,
  entry,
  onClose,
}: {
  scope: string;
  stateKey: string;
  entry: { key: string; value: unknown } | undefined;
  onClose: () => void;
}) {
  const queryClient = useQueryClient();
  const lookup = useStateKey(scope, stateKey, entry === undefined);
  const found = entry ?? lookup.data ?? undefined;
  const [editing, setEditing] = useState(false);
  const [saved, setSaved] = useState(false);
  const [confirm, setConfirm] = useState(false);
  const remove = useMutation({
    mutationFn: () => deleteState(scope, stateKey),
    onSuccess: async () => {
      await invalidateState(queryClient, scope);
      onClose();
    },
  });

  return (
    <aside className="detail st-detail" aria-label={`Key ${stateKey}`} data-testid="state-detail">
      <div className="detail-header">
        <h2 className="code-id">{stateKey}</h2>
        <CopyButton text={stateKey} label="Copy key" />
        <button type="button" className="btn ghost small" aria-label="Close" onClick={onClose}>
          <X size={14} aria-hidden="true" />
        </button>
      </div>
      {!found && lookup.isPending && <p className="muted">Loading…</p>}
      <ErrorBox error={entry ? null : lookup.error} />
      {!found && lookup.data === null && (
        <p className="muted">
          Scope <span className="code-id">{scope}</span> has no key <span className="code-id">{stateKey}</span> (it may have been deleted).
        </p>
      )}
      {found && (
        <>
          <dl className="grid-info">
            <dt>Scope</dt>
            <dd className="code-id">{scope}</dd>
            <dt>Type</dt>
            <dd>
              <span className="badge">{typeOf(found.value)}</span>
            </dd>
          </dl>
          {editing ? (
            <ItemEditor
              scope={scope}
              stateKey={stateKey}
              value={found.value}
              onDone={(didSave) => {
                setEditing(false);
                setSaved(didSave);
              }}
            />
          ) : (
            <section className="section">
              <h3>Value</h3>
              <JsonView value={found.value} label={`Value of ${stateKey}`} maxHeight={480} />
              <div className="st-actions">
                <button
                  type="button"
                  className="btn"
                  data-testid="state-edit"
                  onClick={() => {
                    setSaved(false);
                    remove.reset();
                    setEditing(true);
                  }}
                >
                  <Pencil size={14} aria-hidden="true" />
                  Edit
                </button>
                <button type="button" className="btn danger" data-testid="state-delete" disabled={remove.isPending} onClick={() => setConfirm(true)}>
                  <Trash2 size={14} aria-hidden="true" />
                  {remove.isPending ? 'Deleting…' : 'Delete'}
                </button>
              </div>
              {saved && (
                <div className="card result ok" data-testid="action-result" role="status">
                  Saved. State triggers on scope <span className="code-id">{scope}</span> fire <code>state:updated</code>.
                </div>
              )}
              <ActionError error={remove.error} />
            </section>
          )}
        </>
      )}
      <ConfirmDialog
        open={confirm}
        title={`Delete key ${stateKey} from scope ${scope}?`}
        confirmLabel="Delete"
        danger
        onCancel={() => setConfirm(false)}
        onConfirm={() => {
          setConfirm(false);
          remove.mutate();
        }}
      >
        State triggers on this scope fire <code>state:deleted</code>.
      </ConfirmDialog>
    </aside>
  );
}
