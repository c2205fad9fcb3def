import { STREAMS, SUBJECTS, token } from '#contracts';
import { compareRecorded, podNodes, podUids, type RecordedMessage } from '#domain/history';
import type { StreamQuery, StreamReader } from './stream-reader.js';

/** A pod or node named on the command line: `NS/NAME`, `pod/NAME` (-n namespace) or `node/NAME`. */
export type Target = { kind: 'pod'; namespace: string; name: string } | { kind: 'node'; name: string };

export class TargetError extends Error {
  override readonly name = 'TargetError';
}

export function parseTarget(text: string, namespace = 'default'): Target {
  const [first, second, ...rest] = text.split('/');
  if (rest.length > 0 || !first) throw new TargetError(`"${text}" is not NS/NAME, pod/NAME or node/NAME`);
  if (second === undefined) return { kind: 'pod', namespace, name: first };
  if (!second) throw new TargetError(`"${text}" names no object`);
  if (['node', 'nodes', 'no'].includes(first)) return { kind: 'node', name: second };
  if (['pod', 'pods', 'po'].includes(first)) return { kind: 'pod', namespace, name: second };
  return { kind: 'pod', namespace: first, name: second };
}

/** Per-uid subjects of a pod in every stream; `*` stands for whichever node wrote them. */
function uidQueries(uid: string): StreamQuery[] {
  return [
    { stream: STREAMS.pods, filter: `jetlet.podstatus.*.${uid}` },
    { stream: STREAMS.pods, filter: `jetlet.mirror.*.${uid}` },
    { stream: STREAMS.assign, filter: `jetlet.assign.*.${uid}` },
    { stream: STREAMS.events, filter: `jetlet.events.*.${uid}` },
  ];
}

/**
 * Everything the streams hold about one pod, read with subject filters only (cost grows
 * with the pod's messages, not with the streams): its aggregate and the API's audit records
 * of its name, then per uid its status,
 * assignment and events, then the lifecycle and heartbeats of the nodes it was on.
 */
export async function readPod(reader: StreamReader, namespace: string, name: string): Promise<RecordedMessage[]> {
  const aggregate = await reader.read({ stream: STREAMS.pods, filter: SUBJECTS.pod(namespace, name) });
  const audit = await reader.read({ stream: STREAMS.events, filter: SUBJECTS.audit('pods', namespace, name) });
  let uids = podUids(aggregate, namespace, name);
  // A static pod's mirror has no aggregate: its uid is on the mirror subjects.
  if (uids.length === 0) uids = podUids(await reader.read({ stream: STREAMS.pods, filter: SUBJECTS.allMirrorPods }), namespace, name);
  const perUid = await reader.readAll(uids.flatMap(uidQueries));
  const nodes = podNodes([...aggregate, ...perUid], uids);
  const perNode = await reader.readAll(
    nodes.flatMap((n) => [
      { stream: STREAMS.events, filter: SUBJECTS.nodeLifecycleEvents(n) },
      { stream: STREAMS.nodes, filter: SUBJECTS.nodeHeartbeat(n) },
    ]),
  );
  return mergeUnique([aggregate, audit, perUid, perNode]);
}

/** Everything about one node: its own subjects in every stream, and the pods bound to it. */
export async function readNode(reader: StreamReader, node: string): Promise<RecordedMessage[]> {
  const t = token(node);
  return reader.readAll([
    { stream: STREAMS.nodes, filter: `jetlet.nodes.${t}.>` },
    { stream: STREAMS.events, filter: `jetlet.events.${t}.>` },
    { stream: STREAMS.assign, filter: `jetlet.assign.${t}.>` },
    { stream: STREAMS.pods, filter: `jetlet.podstatus.${t}.>` },
    { stream: STREAMS.pods, filter: SUBJECTS.allPods },
  ]);
}

/** The streams whole (each up to a point when given). */
export async function readStreams(reader: StreamReader, streams: string[], until?: { seq?: number; ms?: number }): Promise<RecordedMessage[]> {
  return reader.readAll(
    streams.map((stream) => ({
      stream,
      ...(stream === STREAMS.pods && until?.seq !== undefined ? { untilSeq: until.seq } : {}),
      ...(until?.ms !== undefined ? { untilMs: until.ms } : {}),
    })),
  );
}

function mergeUnique(parts: RecordedMessage[][]): RecordedMessage[] {
  const seen = new Set<string>();
  return parts
    .flat()
    .filter((m) => {
      const key = `${m.stream}/${m.seq}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .sort(compareRecorded);
}
