import type { RedisConnection } from './redis-connection.js';

interface Channel {
  listeners: Set<ChannelListener>;
  /** Settles once the channel's SUBSCRIBE was answered: true when subscribed, false when it failed. */
  subscribed: Promise<boolean>;
}

interface ChannelListener {
  message: (text: string) => void;
  resumed?: () => void;
}

/**
 * Redis pub/sub channels on a connection of their own (a subscribed connection can run nothing else),
 * shared by the adapters that listen: a channel is SUBSCRIBEd while it has listeners and UNSUBSCRIBEd with
 * its last one. Pub/sub keeps nothing for a connection that is down: when it comes back, every channel is
 * subscribed again (ioredis does it too; asking twice is harmless) and listeners that asked to be told
 * (`resumed`) are, so that they can look for what they missed.
 */
export class RedisChannels {
  private readonly channels = new Map<string, Channel>();
  private closed = false;

  /** @param onSubscribeFailure told when a SUBSCRIBE fails (it is asked again when the connection comes back). */
  constructor(
    private readonly connection: RedisConnection,
    private readonly onSubscribeFailure?: (channel: string, err: Error) => void,
  ) {
    const client = connection.client;
    client.on('message', (channel: string, text: string) => {
      const entry = this.channels.get(channel);
      if (entry) for (const listener of [...entry.listeners]) listener.message(text);
    });
    // The connection was opened before this listener was added: every 'ready' it sees is a reconnection.
    client.on('ready', () => {
      for (const [channel, entry] of this.channels) entry.subscribed = this.subscribe(channel);
      for (const entry of this.channels.values()) for (const listener of [...entry.listeners]) listener.resumed?.();
    });
  }

  /**
   * Calls `message` with every message of `channel` (and `resumed` after each reconnection) until `stop` is
   * called. `subscribed` settles once messages published from then on reach the listener (false: the
   * SUBSCRIBE failed, and is asked again when the connection comes back).
   */
  listen(channel: string, message: (text: string) => void, resumed?: () => void): { subscribed: Promise<boolean>; stop: () => void } {
    let entry = this.channels.get(channel);
    if (!entry) {
      entry = { listeners: new Set(), subscribed: this.subscribe(channel) };
      this.channels.set(channel, entry);
    }
    const listener: ChannelListener = { message, resumed };
    entry.listeners.add(listener);
    const own = entry;
    const stop = () => {
      if (!own.listeners.delete(listener) || own.listeners.size > 0 || this.channels.get(channel) !== own) return;
      this.channels.delete(channel);
      if (!this.closed) void this.connection.call(() => this.connection.client.unsubscribe(channel)).catch(() => {});
    };
    return { subscribed: own.subscribed, stop };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.channels.clear();
    await this.connection.close();
  }

  private subscribe(channel: string): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    return this.connection
      .call(() => this.connection.client.subscribe(channel))
      .then(
        () => true,
        (err: Error) => {
          this.onSubscribeFailure?.(channel, err);
          return false;
        },
      );
  }
}
