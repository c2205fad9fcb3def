import type { SignalReadings } from '../node/node-conditions.js';

/** Where the eviction manager reads its signals; a test injects its own readings. */
export interface SignalReader {
  read(): SignalReadings;
}

export const EVICTION_SIGNAL_READER = Symbol('EVICTION_SIGNAL_READER');
