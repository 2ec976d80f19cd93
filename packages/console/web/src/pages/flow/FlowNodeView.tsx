import { Handle, type Node, type NodeProps, Position } from '@xyflow/react';
import { Clock, Database, FunctionSquare, Globe, Inbox, type LucideIcon, Radio, ScrollText, Zap } from 'lucide-react';
import { memo } from 'react';
import type { FlowNode } from '../../../../src/api-types.js';
import { nodeSubtitle, nodeTone } from './graph.js';

export type FlowNodeData = { node: FlowNode };
export type FlowRfNode = Node<FlowNodeData, 'flint'>;

const TRIGGER_ICONS: Record<string, LucideIcon> = {
  http: Globe,
  cron: Clock,
  'durable:subscriber': Inbox,
  subscribe: Radio,
  state: Database,
  stream: Radio,
  'stream:join': Radio,
  'stream:leave': Radio,
  log: ScrollText,
};

function iconOf(n: FlowNode): LucideIcon {
  switch (n.kind) {
    case 'function':
      return FunctionSquare;
    case 'topic':
      return Inbox;
    case 'scope':
      return Database;
    case 'trigger':
      return TRIGGER_ICONS[n.trigger_type ?? ''] ?? Zap;
  }
}

/** A box of the graph: what it is, its name, and its live figures. */
export const FlowNodeView = memo(function FlowNodeView({ data, selected }: NodeProps<FlowRfNode>) {
  const n = data.node;
  const Icon = iconOf(n);
  const tone = n.kind === 'function' ? nodeTone(n) : n.missing || (n.status !== undefined && n.status !== 'active') ? 'warn' : 'idle';
  return (
    <div
      className={`flow-node kind-${n.kind} tone-${tone}${selected ? ' selected' : ''}`}
      data-testid="flow-node"
      data-node-id={n.id}
      data-kind={n.kind}
      title={n.kind === 'function' ? n.label : `${n.label} (${n.kind})`}
    >
      <Handle type="target" position={Position.Left} isConnectable={false} className="flow-handle" />
      <Icon size={16} aria-hidden className="flow-node-icon" />
      <div className="flow-node-text">
        <div className={`flow-node-label${n.kind === 'function' || n.kind === 'topic' || n.kind === 'scope' ? ' mono' : ''}`}>{n.label}</div>
        <div className="flow-node-sub" data-testid="flow-node-sub">
          {nodeSubtitle(n)}
        </div>
      </div>
      <Handle type="source" position={Position.Right} isConnectable={false} className="flow-handle" />
    </div>
  );
});
