import { STREAMS, type Pod } from '#contracts';
import { PodProjection, podView } from '#domain/history';
import type { StreamReader } from '../streams/stream-reader.js';

/**
 * `get pods -w`: folds the pods stream with the API's projection and, for every message
 * after `afterSeq` (the list's resourceVersion), hands over the pod it changed, as the API
 * would now show it (`removed` once it left). Runs until the returned stop is called.
 */
export function watchPods(
  reader: StreamReader,
  afterSeq: number,
  namespace: string | undefined,
  onChange: (pod: Pod, removed: boolean) => void,
): Promise<() => Promise<void>> {
  const pods = new PodProjection();
  return reader.follow({ stream: STREAMS.pods, filter: '>' }, (m) => {
    if (!m.envelope) return;
    const record = pods.apply(m.envelope, m.seq);
    if (!record || m.seq <= afterSeq || (namespace !== undefined && record.namespace !== namespace)) return;
    onChange(podView(record), record.removed);
  });
}
