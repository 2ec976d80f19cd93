/** The console server's connection to the engine bridge. */
export type BridgeState = 'connected' | 'connecting' | 'disconnected';
