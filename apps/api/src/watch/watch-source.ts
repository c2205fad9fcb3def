import type { WatchCache } from '#domain';

/**
 * One watchable resource: its cache of objects and changes, and how to read and show them.
 * Pods, nodes and events are registered by WatchService; another resource (namespaces)
 * plugs in with `WatchService.register`.
 */
export interface WatchSource<T> {
  /** The URL's resource name: `pods`. */
  resource: string;
  /** The object kind, for BOOKMARK objects: `Pod`. */
  kind: string;
  namespaced: boolean;
  /** The field labels `fieldSelector` may name. */
  selectableFields: readonly string[];
  cache: WatchCache<T>;
  nameOf(object: T): string;
  namespaceOf(object: T): string | undefined;
  labelsOf(object: T): Record<string, string> | undefined;
  fieldsOf(object: T): Record<string, string>;
  /** The API object as sent now (a node's Ready depends on the time). */
  render(object: T): object;
}
