import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import {
  Background,
  Controls,
  type Edge,
  MarkerType,
  type NodeTypes,
  ReactFlow,
  ReactFlowProvider,
  type Node as RfNode,
  useNodesState,
  useReactFlow,
} from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { RotateCcw } from 'lucide-react';
import { useCallback, useEffect, useMemo, useRef } from 'react';
import type { FlowEdge, FlowLayout, FlowNode, FlowResponse } from '../../../src/api-types.js';
import { EmptyState } from '../components/EmptyState.js';
import { ErrorBox } from '../components/ErrorBox.js';
import { api } from '../lib/api.js';
import { useConsoleConfig } from '../lib/queries.js';
import { EdgeDetail, NodeDetail } from './flow/FlowDetail.js';
import { EdgeList } from './flow/FlowList.js';
import { FlowNodeView, type FlowRfNode } from './flow/FlowNodeView.js';
import { ASYNC_KINDS, edgeLabel, edgeTone, layoutPositions, shapeKey, visibleGraph, withMoved } from './flow/graph.js';
import { LoadingLine } from './PageStatus.js';
import './pages.css';
import './flow/flow.css';

const route = getRouteApi('/flow');

/** The graph and its figures are refreshed this often. */
const REFRESH_MS = 3000;

const nodeTypes: NodeTypes = { flint: FlowNodeView };

/** Flow: triggers → functions → what they call, publish and fire, from the registry and recent traces (opt-in: --enable-flow). */
export function FlowPage() {
  const config = useConsoleConfig();
  if (config.isPending) {
    return (
      <div className="page">
        <header className="page-header">
          <h1>Flow</h1>
        </header>
        <LoadingLine />
      </div>
    );
  }
  if (!config.data?.enable_flow) {
    return (
      <div className="page">
        <header className="page-header">
          <h1>Flow</h1>
        </header>
        <EmptyState title="The Flow page is off">
          <p>
            It draws your triggers, functions and the calls between them, learned from recent traces. Start the console with <code>--enable-flow</code> (
            <code>npx flint console --enable-flow</code>) or set <code>FLINT_ENABLE_FLOW=1</code> in its environment.
          </p>
        </EmptyState>
      </div>
    );
  }
  return (
    <ReactFlowProvider>
      <FlowView />
    </ReactFlowProvider>
  );
}

function FlowView() {
  const search = route.useSearch();
  const navigate = route.useNavigate();
  const queryClient = useQueryClient();
  const flow = useQuery({ queryKey: ['flow'], queryFn: () => api.get<FlowResponse>('_console/flow'), refetchInterval: REFRESH_MS });
  const layout = useQuery({ queryKey: ['flow-layout'], queryFn: () => api.get<FlowLayout>('_console/flow/layout'), staleTime: Number.POSITIVE_INFINITY });
  const save = useMutation({
    mutationFn: (positions: FlowLayout['positions']) => api.put<FlowLayout>('_console/flow/layout', { positions }),
    onMutate: (positions) => {
      queryClient.setQueryData<FlowLayout>(['flow-layout'], (old) => ({ stored: old?.stored ?? 'state', positions }));
    },
    onSuccess: (saved) => queryClient.setQueryData(['flow-layout'], saved),
  });

  const connectedOnly = search.connected === '1';
  const listView = search.view === 'list';
  const data = flow.data;
  const { nodes: shownNodes, edges: shownEdges } = useMemo(
    () => visibleGraph<FlowNode, FlowEdge>(data?.nodes ?? [], data?.edges ?? [], connectedOnly),
    [data, connectedOnly],
  );
  const byId = useMemo(() => new Map((data?.nodes ?? []).map((n) => [n.id, n])), [data]);
  const saved = layout.data?.positions;

  // The layout is redone only when the graph's shape or the saved positions change, not on every refresh.
  const shape = shapeKey(shownNodes, shownEdges);
  const shapeRef = useRef({ shape: '', saved: undefined as unknown, positions: {} as ReturnType<typeof layoutPositions> });
  if (shapeRef.current.shape !== shape || shapeRef.current.saved !== saved) {
    shapeRef.current = { shape, saved, positions: layoutPositions(shownNodes, shownEdges, saved ?? {}) };
  }
  const positions = shapeRef.current.positions;

  const [rfNodes, setRfNodes, onNodesChange] = useNodesState<FlowRfNode>([]);
  useEffect(() => {
    setRfNodes((prev) => {
      const before = new Map(prev.map((n) => [n.id, n]));
      return shownNodes.map((node): FlowRfNode => {
        const old = before.get(node.id);
        // A node being dragged keeps the position under the pointer.
        const position = old?.dragging ? old.position : (positions[node.id] ?? { x: 0, y: 0 });
        return {
          ...(old ?? {}),
          id: node.id,
          type: 'flint',
          position,
          data: { node },
          selected: search.node === node.id,
          ariaLabel: `${node.kind} ${node.label}`,
        };
      });
    });
  }, [shownNodes, positions, search.node, setRfNodes]);

  const rfEdges = useMemo(
    () =>
      shownEdges.map((e): Edge => {
        const tone = edgeTone(e);
        return {
          id: e.id,
          source: e.source,
          target: e.target,
          label: edgeLabel(e),
          className: `flow-edge tone-${tone} kind-${e.kind}${ASYNC_KINDS.has(e.kind) ? ' async' : ''}${e.registered ? ' registered' : ''}`,
          animated: false,
          selected: search.edge === e.id,
          markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16 },
          ariaLabel: `${e.kind} edge from ${byId.get(e.source)?.label ?? e.source} to ${byId.get(e.target)?.label ?? e.target}`,
          labelBgPadding: [4, 2],
          labelBgBorderRadius: 4,
        };
      }),
    [shownEdges, search.edge, byId],
  );

  const select = useCallback(
    (sel: { node?: string; edge?: string }) => void navigate({ search: (prev) => ({ ...prev, node: sel.node, edge: sel.edge }), replace: true }),
    [navigate],
  );
  const setParam = (key: string, value: string | undefined) => void navigate({ search: (prev) => ({ ...prev, [key]: value }), replace: true });

  const onNodeDragStop = useCallback(
    (_: unknown, _node: RfNode, dragged: RfNode[]) => {
      save.mutate(withMoved(saved ?? {}, dragged));
    },
    [save, saved],
  );

  // Fit the view once the first graph is drawn.
  const { fitView } = useReactFlow();
  const fitted = useRef(false);
  useEffect(() => {
    if (fitted.current || rfNodes.length === 0 || listView) return;
    fitted.current = true;
    const t = setTimeout(() => void fitView({ padding: 0.15, maxZoom: 1.2 }), 50);
    return () => clearTimeout(t);
  }, [rfNodes.length, fitView, listView]);

  const selectedNode = search.node ? byId.get(search.node) : undefined;
  const selectedEdge = search.edge ? data?.edges.find((e) => e.id === search.edge) : undefined;
  const savedCount = Object.keys(saved ?? {}).length;

  return (
    <div className="page flow-page">
      <header className="page-header">
        <h1>Flow</h1>
        {data && (
          <span className="badge count-badge" data-testid="flow-counts">
            {shownNodes.length} nodes · {shownEdges.length} edges
          </span>
        )}
        <span className="spacer" />
        <fieldset className="segmented">
          <legend className="sr-only">View</legend>
          <button type="button" className={`btn small${listView ? '' : ' active'}`} aria-pressed={!listView} onClick={() => setParam('view', undefined)}>
            Graph
          </button>
          <button type="button" className={`btn small${listView ? ' active' : ''}`} aria-pressed={listView} onClick={() => setParam('view', 'list')}>
            Edges
          </button>
        </fieldset>
        <label className="check">
          <input type="checkbox" checked={connectedOnly} onChange={(e) => setParam('connected', e.target.checked ? '1' : undefined)} />
          Connected only
        </label>
        <button
          type="button"
          className="btn small"
          disabled={savedCount === 0 || save.isPending}
          onClick={() => save.mutate({})}
          title="Forget the dragged positions and lay the graph out again"
          data-testid="flow-reset-layout"
        >
          <RotateCcw size={14} aria-hidden /> Reset layout
        </button>
      </header>
      <FlowHint data={data} layout={layout.data} saveError={save.error} refreshError={flow.isError ? flow.error : undefined} />
      <div className="page-body">
        <section className="flow-canvas" aria-label="Flow graph">
          {flow.isPending ? (
            <LoadingLine />
          ) : flow.isError && !data ? (
            <div className="page-error">
              <ErrorBox error={flow.error} />
            </div>
          ) : data && data.nodes.length === 0 ? (
            <EmptyState title="Nothing to draw yet">
              <p>Connect a worker that registers functions and triggers; they show up here with the calls between them.</p>
            </EmptyState>
          ) : listView ? (
            <EdgeList edges={shownEdges} nodes={byId} selected={search.edge} onSelect={select} />
          ) : (
            <ReactFlow<FlowRfNode, Edge>
              nodes={rfNodes}
              edges={rfEdges}
              nodeTypes={nodeTypes}
              onNodesChange={onNodesChange}
              onNodeDragStop={onNodeDragStop}
              onNodeClick={(_, n) => select({ node: n.id })}
              onEdgeClick={(_, e) => select({ edge: e.id })}
              onPaneClick={() => (search.node || search.edge ? select({}) : undefined)}
              nodesConnectable={false}
              edgesFocusable
              nodesFocusable
              deleteKeyCode={null}
              minZoom={0.1}
              maxZoom={2}
              proOptions={{ hideAttribution: true }}
            >
              <Background gap={20} size={1} />
              <Controls showInteractive={false} />
            </ReactFlow>
          )}
        </section>
        {selectedNode ? (
          <NodeDetail node={selectedNode} nodes={byId} edges={data?.edges ?? []} onSelect={select} onClose={() => select({})} />
        ) : selectedEdge ? (
          <EdgeDetail edge={selectedEdge} nodes={byId} onSelect={select} onClose={() => select({})} />
        ) : null}
      </div>
    </div>
  );
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** One line on where the edges come from, and what is missing. */
function FlowHint({
  data,
  layout,
  saveError,
  refreshError,
}: {
  data: FlowResponse | undefined;
  layout: FlowLayout | undefined;
  saveError: unknown;
  refreshError: unknown;
}) {
  if (!data) return null;
  const t = data.traces;
  return (
    <p className="hint-line" data-testid="flow-hint">
      {t.available ? (
        <>
          Edges between functions are learned from the engine's {t.window} most recent traces
          {t.pending > 0 ? ` (${t.pending} more being read)` : ''}; counts on functions are since the engine started.
        </>
      ) : (
        <>Only the registry is shown: {t.detail ?? 'traces are not available'}.</>
      )}
      {!data.metrics_available && ' Call counts need flint-observability with metrics_enabled.'}
      {layout?.stored === 'memory' && ' Positions are kept in the console’s memory (flint-state is not loaded).'}
      {refreshError ? <span className="error-text"> Refreshing failed ({errorText(refreshError)}): this is the last graph read.</span> : null}
      {saveError ? <span className="error-text"> Saving the positions failed: {errorText(saveError)}</span> : null}
    </p>
  );
}
