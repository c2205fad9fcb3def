import { STREAMS } from '#contracts';
import { compareRecorded, type RecordedMessage } from '#domain/history';
import { readPod } from './queries.js';
import type { StreamReader } from './stream-reader.js';

/**
 * What `explain` needs about one pod: its own messages, the whole pods stream (every pod's
 * requests count on its node), the nodes stream, and the nodes' lifecycle events.
 */
export async function readExplainInputs(reader: StreamReader, namespace: string, name: string): Promise<RecordedMessage[]> {
  const [own, cluster] = await Promise.all([
    readPod(reader, namespace, name),
    reader.readAll([{ stream: STREAMS.pods }, { stream: STREAMS.nodes }, { stream: STREAMS.events, filter: 'jetlet.events.*.lifecycle' }]),
  ]);
  const seen = new Set(cluster.map((m) => `${m.stream}/${m.seq}`));
  return [...cluster, ...own.filter((m) => !seen.has(`${m.stream}/${m.seq}`))].sort(compareRecorded);
}
