import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Dialog } from 'radix-ui';
import { type FormEvent, useId, useState } from 'react';
import { JsonEditor, parseJson } from '../../components/JsonEditor.js';
import { ActionError } from '../triggers/InvokeResult.js';
import { invalidateState, putState } from './model.js';

/** The Add form: scope (a new name creates the scope), key and value. */
export function AddKeyDialog({
  open,
  initialScope,
  onOpenChange,
  onAdded,
}: {
  open: boolean;
  initialScope: string;
  onOpenChange: (open: boolean) => void;
  onAdded: (scope: string, key: string) => void;
}) {
  return (
    <Dialog.Root open={open} onOpenChange={onOpenChange}>
      <Dialog.Portal>
        <Dialog.Overlay className="dialog-overlay" />
        <Dialog.Content
          className="dialog st-add-dialog"
          data-testid="state-add-dialog"
          onOpenAutoFocus={(e) => {
            // The scope is usually the selected one: start in the key.
            const first = (e.currentTarget as HTMLElement | null)?.querySelector<HTMLInputElement>('[data-autofocus]');
            if (first) {
              e.preventDefault();
              first.focus();
            }
          }}
        >
          {open && <AddKeyForm initialScope={initialScope} onCancel={() => onOpenChange(false)} onAdded={onAdded} />}
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}

function AddKeyForm({ initialScope, onCancel, onAdded }: { initialScope: string; onCancel: () => void; onAdded: (scope: string, key: string) => void }) {
  const id = useId();
  const queryClient = useQueryClient();
  const [scope, setScope] = useState(initialScope);
  const [key, setKey] = useState('');
  const [text, setText] = useState('{}');
  const [touched, setTouched] = useState(false);
  const parsed = parseJson(text);
  const add = useMutation({
    mutationFn: (v: { scope: string; key: string; value: unknown }) => putState(v.scope, v.key, v.value),
    onSuccess: async (_res, v) => {
      await invalidateState(queryClient, v.scope);
      onAdded(v.scope, v.key);
    },
  });
  const scopeMissing = scope.trim() === '';
  const keyMissing = key === '';
  const submit = (e?: FormEvent) => {
    e?.preventDefault();
    setTouched(true);
    if (scopeMissing || keyMissing || !parsed.ok || add.isPending) return;
    add.mutate({ scope: scope.trim(), key, value: parsed.value });
  };
  return (
    <form className="st-add-form" onSubmit={submit} noValidate>
      <Dialog.Title asChild>
        <h2>Add a key</h2>
      </Dialog.Title>
      <Dialog.Description className="muted small">
        Writes the value with <code>state::set</code>: a key that exists is overwritten, a new scope name creates the scope.
      </Dialog.Description>
      <div className="field">
        <label htmlFor={`${id}-scope`}>Scope</label>
        <input
          id={`${id}-scope`}
          className={`input mono${touched && scopeMissing ? ' invalid' : ''}`}
          required
          aria-invalid={touched && scopeMissing}
          value={scope}
          onChange={(e) => setScope(e.target.value)}
        />
        {touched && scopeMissing && <span className="error-text small">Enter a scope</span>}
      </div>
      <div className="field">
        <label htmlFor={`${id}-key`}>Key</label>
        <input
          id={`${id}-key`}
          className={`input mono${touched && keyMissing ? ' invalid' : ''}`}
          required
          aria-invalid={touched && keyMissing}
          data-autofocus={initialScope !== '' ? true : undefined}
          value={key}
          onChange={(e) => setKey(e.target.value)}
        />
        {touched && keyMissing && <span className="error-text small">Enter a key</span>}
      </div>
      <JsonEditor label="Value (JSON)" value={text} onChange={setText} onSubmit={submit} rows={8} />
      <ActionError error={add.error} />
      <div className="dialog-actions">
        <button type="button" className="btn" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="btn primary" data-testid="state-add-save" disabled={!parsed.ok || add.isPending}>
          {add.isPending ? 'Adding…' : 'Add'}
        </button>
      </div>
    </form>
  );
}
