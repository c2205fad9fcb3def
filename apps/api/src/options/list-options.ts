import { parseFieldSelector, parseLabelSelector, SelectorError, type FieldSelector, type LabelSelector } from '#domain';
import { KubeStatusException } from '../errors/kube-status.exception.js';

/** The query of a list or watch, as Kubernetes' metav1.ListOptions. */
export interface ListOptions {
  labelSelector: LabelSelector;
  fieldSelector: FieldSelector;
  watch: boolean;
  /** Absent, "0", or a stream sequence. */
  resourceVersion?: string;
  resourceVersionMatch?: string;
  sendInitialEvents?: boolean;
  allowWatchBookmarks: boolean;
  timeoutSeconds?: number;
}

type Query = Record<string, unknown>;

/** The first value of a query parameter (a repeated one counts once, as Go's url.Values.Get). */
export function queryValue(query: Query, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** Go's strconv.ParseBool, which the API server uses for boolean query parameters. */
function parseBool(raw: string | undefined): boolean | undefined {
  if (raw === undefined) return undefined;
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(raw)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False', ''].includes(raw)) return false;
  throw KubeStatusException.badRequest(`strconv.ParseBool: parsing ${JSON.stringify(raw)}: invalid syntax`);
}

const invalidListOptions = (causes: Array<{ field: string; reason: string; message: string }>): KubeStatusException =>
  new KubeStatusException(422, 'Invalid', `ListOptions.meta.k8s.io "" is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join(', ')}`, {
    kind: 'ListOptions',
    name: '',
    causes,
  });

/**
 * Parses and validates a list's query as the API server does: a bad selector is a 400
 * with the parser's message, contradictory watch options a 422 on ListOptions.
 */
export function parseListOptions(query: Query, selectableFields: readonly string[]): ListOptions {
  let labelSelector: LabelSelector;
  let fieldSelector: FieldSelector;
  try {
    labelSelector = parseLabelSelector(queryValue(query, 'labelSelector'));
    fieldSelector = parseFieldSelector(queryValue(query, 'fieldSelector'), selectableFields);
  } catch (error) {
    if (error instanceof SelectorError) throw KubeStatusException.badRequest(error.message);
    throw error;
  }
  const watch = parseBool(queryValue(query, 'watch')) ?? false;
  const resourceVersion = queryValue(query, 'resourceVersion') || undefined;
  const resourceVersionMatch = queryValue(query, 'resourceVersionMatch') || undefined;
  const sendInitialEvents = parseBool(queryValue(query, 'sendInitialEvents'));
  const allowWatchBookmarks = parseBool(queryValue(query, 'allowWatchBookmarks')) ?? false;
  const rawTimeout = queryValue(query, 'timeoutSeconds');
  let timeoutSeconds: number | undefined;
  if (rawTimeout !== undefined && rawTimeout !== '') {
    timeoutSeconds = Number(rawTimeout);
    if (!/^-?\d+$/.test(rawTimeout)) throw KubeStatusException.badRequest(`strconv.ParseInt: parsing ${JSON.stringify(rawTimeout)}: invalid syntax`);
  }
  if (resourceVersion !== undefined && resourceVersion !== '0' && !/^\d+$/.test(resourceVersion)) {
    // Kubernetes: a resourceVersion that is not one of its own is a 400 naming it.
    throw KubeStatusException.badRequest(`invalid resource version: ${resourceVersion}`);
  }

  const causes: Array<{ field: string; reason: string; message: string }> = [];
  if (watch) {
    if (sendInitialEvents !== undefined && resourceVersionMatch !== 'NotOlderThan')
      causes.push({
        field: 'resourceVersionMatch',
        reason: 'FieldValueForbidden',
        message: 'Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
      });
    if (sendInitialEvents === true && !allowWatchBookmarks)
      causes.push({
        field: 'allowWatchBookmarks',
        reason: 'FieldValueForbidden',
        message: 'Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true',
      });
    if (resourceVersionMatch !== undefined) {
      if (sendInitialEvents === undefined)
        causes.push({
          field: 'resourceVersionMatch',
          reason: 'FieldValueForbidden',
          message: 'Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
        });
      if (resourceVersionMatch !== 'NotOlderThan')
        causes.push({
          field: 'resourceVersionMatch',
          reason: 'FieldValueNotSupported',
          message: `Unsupported value: ${JSON.stringify(resourceVersionMatch)}: supported values: "NotOlderThan"`,
        });
    }
  } else {
    if (resourceVersionMatch !== undefined) {
      if (resourceVersion === undefined)
        causes.push({
          field: 'resourceVersionMatch',
          reason: 'FieldValueForbidden',
          message: 'Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
        });
      if (resourceVersionMatch !== 'Exact' && resourceVersionMatch !== 'NotOlderThan')
        causes.push({
          field: 'resourceVersionMatch',
          reason: 'FieldValueNotSupported',
          message: `Unsupported value: ${JSON.stringify(resourceVersionMatch)}: supported values: "Exact", "NotOlderThan", ""`,
        });
      if (resourceVersionMatch === 'Exact' && resourceVersion === '0')
        causes.push({
          field: 'resourceVersionMatch',
          reason: 'FieldValueForbidden',
          message: 'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        });
    }
    if (sendInitialEvents !== undefined)
      causes.push({ field: 'sendInitialEvents', reason: 'FieldValueForbidden', message: 'Forbidden: sendInitialEvents is forbidden for list' });
  }
  if (causes.length > 0) throw invalidListOptions(causes);
  return {
    labelSelector,
    fieldSelector,
    watch,
    ...(resourceVersion !== undefined ? { resourceVersion } : {}),
    ...(resourceVersionMatch !== undefined ? { resourceVersionMatch } : {}),
    ...(sendInitialEvents !== undefined ? { sendInitialEvents } : {}),
    allowWatchBookmarks,
    ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
  };
}

/** True when an object passes both selectors. */
export function selected(
  options: Pick<ListOptions, 'labelSelector' | 'fieldSelector'>,
  labels: Record<string, string> | undefined,
  fields: () => Record<string, string>,
): boolean {
  return options.labelSelector.matches(labels) && (options.fieldSelector.empty || options.fieldSelector.matches(fields()));
}
