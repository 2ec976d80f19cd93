import { Activity, Boxes, Cog, Database, FunctionSquare, Inbox, LayoutDashboard, Radio, ScrollText, Waypoints, Zap } from 'lucide-react';

/**
 * The console's pages, in sidebar order: the sidebar, the command palette and the `g <key>` shortcuts
 * all read this list. `flow` pages show only when the console runs with --enable-flow.
 */
export const PAGES = [
  { to: '/', label: 'Dashboard', icon: LayoutDashboard, key: 'd', hint: 'invocations, errors, latency, queues' },
  { to: '/workers', label: 'Workers', icon: Boxes, key: 'w', hint: 'connected workers' },
  { to: '/functions', label: 'Functions', icon: FunctionSquare, key: 'f', hint: 'registered functions, invoke' },
  { to: '/triggers', label: 'Triggers', icon: Zap, key: 't', hint: 'http, cron, subscriptions' },
  { to: '/states', label: 'States', icon: Database, key: 's', hint: 'state scopes and keys' },
  { to: '/streams', label: 'Streams', icon: Radio, key: 'r', hint: 'streams, groups, live messages' },
  { to: '/queues', label: 'Queues', icon: Inbox, key: 'q', hint: 'topics, queues, dead letters' },
  { to: '/traces', label: 'Traces', icon: Activity, key: 'x', hint: 'traces, spans, waterfall, flame graph' },
  { to: '/logs', label: 'Logs', icon: ScrollText, key: 'l', hint: 'log records, live tail' },
  { to: '/flow', label: 'Flow', icon: Waypoints, key: 'o', hint: 'triggers → functions graph', flow: true },
  { to: '/config', label: 'Config', icon: Cog, key: 'c', hint: 'ports, modules, health' },
] as const;

export type PagePath = (typeof PAGES)[number]['to'];

/** The pages shown, given whether Flow is enabled. */
export const visiblePages = (enableFlow: boolean) => PAGES.filter((p) => enableFlow || !('flow' in p));
