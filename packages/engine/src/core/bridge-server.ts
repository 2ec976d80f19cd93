import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type Server, createServer } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { FlintError, type InvokeFunctionMessage, type WorkerToEngine, decodeWorkerFrame } from '@flint/protocol';
import { type RawData, WebSocket, WebSocketServer } from 'ws';
import type { ChannelManager } from './channels.js';
import { type TriggerAck, WorkerConnection } from './connection.js';
import type { Invoker } from './invoker.js';
import type { Logger } from './logger.js';
import type { TriggerTypeProvider } from './module-api.js';
import type { Registry } from './registry.js';
import type { TelemetryBuffer } from './telemetry-buffer.js';
import type { TriggerManager } from './triggers.js';

export interface BridgeOptions {
  host: string;
  port: number;
  maxFrameBytes: number;
  pingIntervalMs: number;
  maxOutboundBytes: number;
  /** How long a worker providing a trigger type has to answer a forwarded registration. */
  triggerAckTimeoutMs: number;
}

export interface BridgeDeps {
  registry: Registry;
  invoker: Invoker;
  triggers: TriggerManager;
  channels: ChannelManager;
  telemetry: TelemetryBuffer;
  logger: Logger;
}

/** The worker bridge: `/` (workers), `/otel` (telemetry) and `/ws/channels/<id>` on one port. */
export class BridgeServer {
  private readonly server: Server;
  private readonly wss: WebSocketServer;
  private readonly otelSockets = new Set<WebSocket>();
  private pinger: NodeJS.Timeout | undefined;
  private readonly log: Logger;

  constructor(
    private readonly deps: BridgeDeps,
    private readonly options: BridgeOptions,
  ) {
    this.log = deps.logger;
    // ws closes an oversized frame's connection with 1009 and no reason; say what the limit is.
    const limitReason = `frame exceeds bridge.max_frame_bytes (${options.maxFrameBytes} bytes)`;
    class BridgeSocket extends WebSocket {
      override close(code?: number, reason?: string | Buffer): void {
        super.close(code, code === 1009 && !reason ? limitReason : reason);
      }
    }
    this.wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: options.maxFrameBytes, WebSocket: BridgeSocket });
    this.server = createServer((_req, res) => {
      res.writeHead(426, { 'content-type': 'application/json', upgrade: 'websocket' });
      res.end(JSON.stringify({ error: 'This is the Flint worker bridge: connect with a WebSocket', code: 'upgrade_required' }));
    });
    this.server.on('upgrade', (req, socket, head) => this.onUpgrade(req, socket, head));
  }

  async listen(): Promise<{ host: string; port: number }> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port, this.options.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.pinger = setInterval(() => this.keepAlive(), this.options.pingIntervalMs).unref();
    const address = this.server.address();
    const port = typeof address === 'object' && address ? address.port : this.options.port;
    return { host: this.options.host, port };
  }

  /** Stops accepting connections (existing ones stay open until `closeConnections`). */
  stopAccepting(): void {
    this.server.close();
    if (this.pinger) clearInterval(this.pinger);
  }

  async closeConnections(): Promise<void> {
    const sockets = [...this.wss.clients];
    await Promise.all(
      sockets.map(
        (ws) =>
          new Promise<void>((resolve) => {
            if (ws.readyState === ws.CLOSED) return resolve();
            const timer = setTimeout(() => ws.terminate(), 2000);
            ws.once('close', () => {
              clearTimeout(timer);
              resolve();
            });
            ws.close(1001, 'engine shutting down');
          }),
      ),
    );
    this.server.closeAllConnections();
  }

  private onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://bridge');
    (socket as Socket).setNoDelay?.(true);
    if (url.pathname === '/' || url.pathname === '') {
      this.wss.handleUpgrade(req, socket, head, (ws) => this.onWorker(ws, req, socket as Socket));
    } else if (url.pathname === '/otel' || url.pathname === '/otel/') {
      this.wss.handleUpgrade(req, socket, head, (ws) => this.onOtel(ws));
    } else if (url.pathname.startsWith('/ws/channels/')) {
      this.onChannelUpgrade(url, req, socket, head);
    } else {
      rejectUpgrade(socket, 404, { error: `No WebSocket endpoint at ${url.pathname}`, code: 'not_found' });
    }
  }

  private onChannelUpgrade(url: URL, req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const dir = url.searchParams.get('dir');
    if (dir !== 'read' && dir !== 'write') {
      return rejectUpgrade(socket, 400, { error: 'Query parameter dir must be "read" or "write"', code: 'invalid_frame' });
    }
    const id = decodeURIComponent(url.pathname.slice('/ws/channels/'.length));
    const key = url.searchParams.get('key');
    const channel = this.deps.channels.lookup(id, key);
    if (!channel) {
      // A worker arriving just after the engine finished with a channel (e.g. the HTTP client left)
      // gets a clean close instead of an error its stream may not handle.
      if (this.deps.channels.wasClosed(id, key)) return this.wss.handleUpgrade(req, socket, head, (ws) => ws.close(1000, 'channel closed'));
      return rejectUpgrade(socket, 404, { error: 'Channel not found', code: 'channel_not_found' });
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      if (dir === 'read' ? channel.readerTaken : channel.writerTaken) {
        ws.close(1008, `the ${dir} end of this channel is already taken`);
        return;
      }
      if (dir === 'read') this.deps.channels.serveReader(channel, ws);
      else this.deps.channels.serveWriter(channel, ws);
    });
  }

  private onOtel(ws: WebSocket): void {
    this.otelSockets.add(ws);
    ws.on('message', (data, isBinary) => {
      if (isBinary) this.deps.telemetry.accept(toBuffer(data));
    });
    ws.on('error', (err) => this.log.debug(`telemetry socket error: ${err.message}`));
    ws.once('close', () => this.otelSockets.delete(ws));
  }

  private onWorker(ws: WebSocket, req: IncomingMessage, socket: Socket): void {
    const conn = new WorkerConnection(randomUUID(), ws, socket, req.socket.remoteAddress ?? null, Date.now(), {
      maxOutboundBytes: this.options.maxOutboundBytes,
    });
    conn.send({ type: 'workerregistered', worker_id: conn.id });
    this.deps.registry.addWorker(conn);
    this.log.debug({ worker_id: conn.id, ip: conn.ipAddress }, 'worker connected');
    ws.on('message', (data, isBinary) => this.onFrame(conn, data, isBinary));
    ws.on('pong', () => {
      conn.alive = true;
    });
    ws.on('error', (err) => this.log.warn({ worker_id: conn.id }, `worker connection error: ${err.message}`));
    ws.once('close', (code, reason) => {
      this.onClose(conn, code, reason.toString()).catch((err: unknown) =>
        this.log.error({ worker_id: conn.id }, `cleanup after disconnect failed: ${String(err)}`),
      );
    });
  }

  private onFrame(conn: WorkerConnection, data: RawData, isBinary: boolean): void {
    conn.alive = true;
    let text: string;
    if (isBinary) {
      const buf = toBuffer(data);
      if (this.deps.telemetry.accept(buf)) return;
      text = buf.toString('utf8');
    } else {
      text = typeof data === 'string' ? data : toBuffer(data).toString('utf8');
    }
    const decoded = decodeWorkerFrame(text);
    if (!decoded.ok) {
      this.log.warn({ worker_id: conn.id }, `bad frame: ${decoded.reason}`);
      if (decoded.invocationId !== undefined) {
        conn.send({
          type: 'invocationresult',
          invocation_id: decoded.invocationId,
          function_id: decoded.functionId ?? '',
          error: { code: 'invalid_frame', message: decoded.reason },
        });
      } else {
        conn.send({ type: 'error', error: { code: 'invalid_frame', message: decoded.reason } });
      }
      return;
    }
    try {
      this.handle(conn, decoded.message);
    } catch (err) {
      // A frame must never take the engine down; answer what can be answered.
      const message = err instanceof Error ? err.message : String(err);
      this.log.error({ worker_id: conn.id, type: decoded.message.type }, `failed to handle a frame: ${message}`);
      const m = decoded.message;
      if (m.type === 'invokefunction' && m.invocation_id) {
        conn.send({ type: 'invocationresult', invocation_id: m.invocation_id, function_id: m.function_id, error: { code: 'internal_error', message } });
      }
    }
  }

  private handle(conn: WorkerConnection, msg: WorkerToEngine): void {
    const { registry, invoker, triggers } = this.deps;
    switch (msg.type) {
      case 'invokefunction':
        return this.onInvoke(conn, msg);
      case 'invocationresult':
        return invoker.handleResult(conn, msg);
      case 'registerfunction':
        if (msg.invocation !== undefined) {
          conn.send({ type: 'error', error: { code: 'function_not_invokable', message: `HTTP-invoked functions are not supported (${msg.id})` } });
          return;
        }
        registry.registerWorkerFunction(conn, {
          id: msg.id,
          description: msg.description,
          request_format: msg.request_format,
          response_format: msg.response_format,
          metadata: msg.metadata,
        });
        return;
      case 'unregisterfunction':
        return registry.unregisterWorkerFunction(conn, msg.id);
      case 'registertrigger': {
        const record = { id: msg.id, type: msg.trigger_type, function_id: msg.function_id, config: msg.config ?? {}, metadata: msg.metadata, owner: conn.id };
        void triggers.register(record, conn).then((outcome) => {
          conn.send({ type: 'triggerregistrationresult', id: msg.id, trigger_type: msg.trigger_type, function_id: msg.function_id, ...outcome });
        });
        return;
      }
      case 'unregistertrigger':
        void triggers.unregister(msg.id);
        return;
      case 'registertriggertype':
        triggers.registerType(
          { id: msg.id, description: msg.description ?? '', trigger_request_format: msg.trigger_request_format, call_request_format: msg.call_request_format },
          this.workerTypeProvider(conn),
          conn,
        );
        return;
      case 'unregistertriggertype':
        return triggers.unregisterType(msg.id, conn);
      case 'triggerregistrationresult': {
        const queue = conn.triggerAcks.get(msg.id);
        const ack = queue?.shift();
        if (!ack) return;
        if (queue?.length === 0) conn.triggerAcks.delete(msg.id);
        clearTimeout(ack.timer);
        if (msg.error) ack.reject(new FlintError(msg.error.code || 'trigger_registration_failed', msg.error.message ?? 'rejected by the provider'));
        else ack.resolve();
        return;
      }
      case 'registerservice':
        conn.services.set(msg.id, { id: msg.id, name: msg.name ?? msg.id, description: msg.description, parent_service_id: msg.parent_service_id });
        return;
      case 'ping':
        return conn.send({ type: 'pong' });
      case 'pong':
        return;
    }
  }

  private onInvoke(conn: WorkerConnection, msg: InvokeFunctionMessage): void {
    const data = msg.data === undefined ? null : msg.data;
    const id = msg.invocation_id ?? undefined;
    const trace = { traceparent: msg.traceparent, baggage: msg.baggage, timeoutMs: msg.timeout_ms, caller: conn };
    if (msg.action?.type === 'enqueue') return this.onEnqueue(conn, msg, msg.action.queue, data);
    if (id === undefined || msg.action?.type === 'void') {
      this.deps.invoker.dispatch(msg.function_id, data, trace, (error) => {
        if (error) this.log.debug({ worker_id: conn.id, function_id: msg.function_id }, `void call failed: ${error.code}: ${error.message}`);
      });
      return;
    }
    const functionId = msg.function_id;
    this.deps.invoker.dispatch(functionId, data, trace, (error, result, ctx) => {
      const reply = {
        type: 'invocationresult',
        invocation_id: id,
        function_id: functionId,
        result,
        error,
        traceparent: ctx?.traceparent,
        baggage: ctx?.baggage,
      };
      let text: string;
      try {
        text = JSON.stringify(reply);
      } catch (err) {
        // e.g. a result nested too deeply to serialise: the caller still gets its one answer.
        const message = `the result of ${functionId} cannot be serialised: ${err instanceof Error ? err.message : String(err)}`;
        text = JSON.stringify({ type: 'invocationresult', invocation_id: id, function_id: functionId, error: { code: 'internal_error', message } });
      }
      conn.sendRaw(text);
    });
  }

  private onEnqueue(conn: WorkerConnection, msg: InvokeFunctionMessage, queue: string, data: unknown): void {
    const id = msg.invocation_id ?? undefined;
    const reply = (result: unknown, error?: { code: string; message: string }) => {
      if (id !== undefined) conn.send({ type: 'invocationresult', invocation_id: id, function_id: msg.function_id, result, error });
    };
    const handler = this.deps.invoker.enqueueHandler;
    if (!handler) return reply(undefined, { code: 'enqueue_error', message: 'Queue module not loaded: enqueue is unavailable' });
    handler(queue, msg.function_id, data).then(
      (receipt) => reply({ messageReceiptId: receipt }),
      (err: unknown) => reply(undefined, { code: 'enqueue_error', message: err instanceof Error ? err.message : String(err) }),
    );
  }

  private async onClose(conn: WorkerConnection, code: number, reason: string): Promise<void> {
    conn.closed = true;
    this.log.debug({ worker_id: conn.id, code, reason }, 'worker disconnected');
    const { registry, invoker, triggers } = this.deps;
    for (const id of [...conn.functions]) registry.unregisterWorkerFunction(conn, id);
    invoker.stopExecuting(conn);
    // Its trigger types go first (synchronously), so that forwarded triggers still awaiting this
    // worker's answer are parked for the next provider rather than failed.
    const removal = triggers.removeOwnedBy(conn);
    for (const ack of [...conn.triggerAcks.values()].flat()) {
      clearTimeout(ack.timer);
      ack.reject(new FlintError('trigger_registration_failed', 'the worker providing this trigger type disconnected'));
    }
    conn.triggerAcks.clear();
    await removal;
    registry.removeWorker(conn);
  }

  /** Forwards triggers of a worker-defined type to that worker and waits for its answer. */
  private workerTypeProvider(conn: WorkerConnection): TriggerTypeProvider {
    return {
      registerTrigger: (t) =>
        new Promise<void>((resolve, reject) => {
          // Workers that never answer (older SDKs) are taken as having accepted the trigger.
          const queue = conn.triggerAcks.get(t.id) ?? [];
          conn.triggerAcks.set(t.id, queue);
          const ack: TriggerAck = {
            resolve,
            reject,
            timer: setTimeout(() => {
              const i = queue.indexOf(ack);
              if (i >= 0) queue.splice(i, 1);
              if (queue.length === 0 && conn.triggerAcks.get(t.id) === queue) conn.triggerAcks.delete(t.id);
              resolve();
            }, this.options.triggerAckTimeoutMs),
          };
          queue.push(ack);
          conn.send({ type: 'registertrigger', id: t.id, trigger_type: t.type, function_id: t.function_id, config: t.config, metadata: t.metadata });
        }),
      unregisterTrigger: (t) => conn.send({ type: 'unregistertrigger', id: t.id, trigger_type: t.type }),
    };
  }

  private keepAlive(): void {
    for (const conn of this.deps.registry.workers.values()) {
      if (!conn.alive) {
        this.log.warn({ worker_id: conn.id }, 'worker did not answer a ping: dropping the connection');
        conn.terminate();
        continue;
      }
      conn.alive = false;
      conn.ping();
    }
  }
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

function rejectUpgrade(socket: Duplex, status: number, body: { error: string; code: string }): void {
  const text = JSON.stringify(body);
  const reason = status === 404 ? 'Not Found' : 'Bad Request';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
}
