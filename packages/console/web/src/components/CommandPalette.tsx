import { useNavigate } from '@tanstack/react-router';
import { Command } from 'cmdk';
import { Database, FunctionSquare, Zap } from 'lucide-react';
import { Dialog } from 'radix-ui';
import { useMemo, useState } from 'react';
import type { TriggerInfo } from '../../../src/api-types.js';
import { matches } from '../lib/format.js';
import { visiblePages } from '../lib/pages.js';
import { useConsoleConfig, useFunctions, useStateGroups, useTriggers } from '../lib/queries.js';
import './palette.css';

/** Items per group with an empty search, and at most with a search (the rest: "refine the search"). */
const IDLE_LIMIT = 6;
const SEARCH_LIMIT = 40;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** A trigger in one line: `http GET /orders/:id → orders::get`, `cron 0 * * * * → jobs::sweep`. */
function triggerLabel(t: TriggerInfo): string {
  const c = (t.config && typeof t.config === 'object' ? t.config : {}) as Record<string, unknown>;
  let what: string | undefined;
  if (t.trigger_type === 'http') what = [str(c.http_method)?.toUpperCase() ?? 'ANY', str(c.api_path) ?? '/'].join(' ');
  else what = str(c.expression) ?? str(c.topic) ?? str(c.scope) ?? str(c.stream_name) ?? str(c.queue) ?? str(c.key);
  return `${t.trigger_type}${what ? ` ${what}` : ''} → ${t.function_id}`;
}

/** Filters and caps one group; matches whose first field starts with the query come first. */
function pick<T>(items: T[], query: string, fields: (item: T) => (string | null | undefined)[], limit: number): { shown: T[]; more: number } {
  const q = query.trim().toLowerCase();
  if (q === '') return { shown: items.slice(0, limit), more: Math.max(0, items.length - limit) };
  const starts: T[] = [];
  const contains: T[] = [];
  for (const item of items) {
    const f = fields(item);
    if (!matches(q, ...f)) continue;
    if (f[0]?.toLowerCase().startsWith(q)) starts.push(item);
    else contains.push(item);
  }
  const all = starts.concat(contains);
  return { shown: all.slice(0, limit), more: Math.max(0, all.length - limit) };
}

function More({ count }: { count: number }) {
  if (count <= 0) return null;
  return (
    <div className="palette-more" aria-hidden="true">
      and {count} more: type to narrow down
    </div>
  );
}

/** The palette's content; mounted only while it is open, so its queries run only then. */
function PaletteBody({ close }: { close: () => void }) {
  const navigate = useNavigate();
  const [search, setSearch] = useState('');
  // Not deferred: cmdk selects the first item after the render that changes the items.
  const query = search;
  const functions = useFunctions(false);
  const triggers = useTriggers(false);
  const groups = useStateGroups();
  const limit = query.trim() === '' ? IDLE_LIMIT : SEARCH_LIMIT;

  const enableFlow = useConsoleConfig().data?.enable_flow ?? false;
  const pages = useMemo(() => {
    const shown = visiblePages(enableFlow);
    return pick(shown, query, (p) => [p.label, p.hint], shown.length);
  }, [query, enableFlow]);
  const fns = useMemo(() => {
    const list = [...(functions.data?.functions ?? [])].sort((a, b) => a.function_id.localeCompare(b.function_id));
    return pick(list, query, (f) => [f.function_id, f.description], limit);
  }, [functions.data, query, limit]);
  const trigs = useMemo(() => {
    const list = (triggers.data?.triggers ?? []).map((t) => ({ t, label: triggerLabel(t) }));
    return pick(list, query, ({ t, label }) => [label, t.id, t.function_id], limit);
  }, [triggers.data, query, limit]);
  const scopes = useMemo(() => pick(groups.data?.groups ?? [], query, (g) => [g.scope], limit), [groups.data, query, limit]);

  const loading = functions.isPending || triggers.isPending || groups.isPending;
  /** Closes the palette, then follows the deep link. */
  const go = (follow: () => Promise<void>) => {
    close();
    void follow();
  };

  return (
    <>
      <Dialog.Title className="sr-only">Command palette</Dialog.Title>
      <Dialog.Description className="sr-only">
        Jump to a page, a function, a trigger or a state scope. Arrow keys move, Enter opens, Escape closes.
      </Dialog.Description>
      <div className="palette-input-row">
        <Command.Input
          className="palette-input"
          data-testid="palette-input"
          aria-label="Search pages, functions, triggers and state scopes"
          placeholder="Jump to a page, function, trigger or scope…"
          value={search}
          onValueChange={setSearch}
        />
        <kbd className="hint">Esc</kbd>
      </div>
      <Command.List className="palette-list" label="Results">
        {loading && <Command.Loading label="Loading">Loading…</Command.Loading>}
        <Command.Empty className="palette-empty">No page, function, trigger or scope matches “{search.trim()}”.</Command.Empty>
        {pages.shown.length > 0 && (
          <Command.Group heading="Pages">
            {pages.shown.map(({ to, label, icon: Icon, hint }) => (
              <Command.Item key={to} value={`page:${to}`} onSelect={() => go(() => navigate({ to }))}>
                <Icon size={15} aria-hidden="true" />
                <span>{label}</span>
                <span className="palette-aside">{hint}</span>
              </Command.Item>
            ))}
          </Command.Group>
        )}
        {fns.shown.length > 0 && (
          <Command.Group heading="Functions">
            {fns.shown.map((f) => (
              <Command.Item
                key={f.function_id}
                value={`fn:${f.function_id}`}
                onSelect={() => go(() => navigate({ to: '/functions', search: { fn: f.function_id } }))}
              >
                <FunctionSquare size={15} aria-hidden="true" />
                <span className="code-id palette-main">{f.function_id}</span>
                {f.description && <span className="palette-aside">{f.description}</span>}
              </Command.Item>
            ))}
            <More count={fns.more} />
          </Command.Group>
        )}
        {trigs.shown.length > 0 && (
          <Command.Group heading="Triggers">
            {trigs.shown.map(({ t, label }) => (
              <Command.Item key={t.id} value={`trigger:${t.id}`} onSelect={() => go(() => navigate({ to: '/triggers', search: { trigger: t.id } }))}>
                <Zap size={15} aria-hidden="true" />
                <span className="palette-main mono">{label}</span>
                {t.status !== 'active' && <span className={`badge ${t.status === 'error' ? 'error' : 'warn'}`}>{t.status}</span>}
              </Command.Item>
            ))}
            <More count={trigs.more} />
          </Command.Group>
        )}
        {scopes.shown.length > 0 && (
          <Command.Group heading="State scopes">
            {scopes.shown.map((g) => (
              <Command.Item key={g.scope} value={`scope:${g.scope}`} onSelect={() => go(() => navigate({ to: '/states', search: { scope: g.scope } }))}>
                <Database size={15} aria-hidden="true" />
                <span className="palette-main mono">{g.scope}</span>
                <span className="palette-aside">
                  {g.count} {g.count === 1 ? 'key' : 'keys'}
                </span>
              </Command.Item>
            ))}
            <More count={scopes.more} />
          </Command.Group>
        )}
      </Command.List>
      <div className="palette-footer small muted" aria-hidden="true">
        <span>
          <kbd>↑</kbd> <kbd>↓</kbd> move
        </span>
        <span>
          <kbd>Enter</kbd> open
        </span>
        <span>
          <kbd>Esc</kbd> close
        </span>
      </div>
    </>
  );
}

/** Ctrl/⌘+K: jump to a page, function, trigger or scope (built on cmdk; Esc closes, arrows move). */
export function CommandPalette({ open, onOpenChange }: { open: boolean; onOpenChange: (open: boolean) => void }) {
  return (
    <Command.Dialog
      open={open}
      onOpenChange={onOpenChange}
      label="Command palette"
      shouldFilter={false}
      loop
      overlayClassName="dialog-overlay"
      contentClassName="palette"
    >
      <PaletteBody close={() => onOpenChange(false)} />
    </Command.Dialog>
  );
}
