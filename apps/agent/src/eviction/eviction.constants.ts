import type { PodStorageUsage } from '#domain/local-storage-eviction';
import type { DesiredPod } from '#domain/reconcile';
import type { SignalReadings } from '../node/node-conditions.js';

/** Where the eviction manager reads its signals; a test injects its own readings. */
export interface SignalReader {
  read(): SignalReadings;
}

export const EVICTION_SIGNAL_READER = Symbol('EVICTION_SIGNAL_READER');

/** Where the eviction manager measures pods' local storage for localStorageEviction; a test injects its own. */
export interface PodStorageReader {
  /** Usage of each pod (by uid) that has an emptyDir sizeLimit or an ephemeral-storage limit. */
  read(pods: DesiredPod[]): Promise<Map<string, PodStorageUsage>>;
}

export const EVICTION_STORAGE_READER = Symbol('EVICTION_STORAGE_READER');
