import { clock, isAtOrBefore, replayTo, seqTime, type LogPoint, type RecordedMessage } from '#domain/history';
import type { Pod } from '#contracts';
import { podReadyColumn, podRestartsColumn, podStatusColumn } from '../pod-columns.js';

const podLine = (p: Pod): string =>
  `status ${podStatusColumn(p)}, ready ${podReadyColumn(p)}, restarts ${podRestartsColumn(p)}, node ${p.spec.nodeName ?? '<none>'}${p.metadata.deletionTimestamp ? ', terminating' : ''}`;

/** What changed between two points: pods and nodes that came, went or changed, and the events in between. */
export function diffText(messages: RecordedMessage[], from: LogPoint, to: LogPoint, graceMs: number): string {
  const a = replayTo(messages, from);
  const b = replayTo(messages, to);
  const lines: string[] = [`Between ${new Date(a.atMs).toISOString()} and ${new Date(b.atMs).toISOString()}:`];
  const before = new Map(a.state.podList().map((p) => [`${p.metadata.namespace}/${p.metadata.name}`, p]));
  const after = new Map(b.state.podList().map((p) => [`${p.metadata.namespace}/${p.metadata.name}`, p]));
  for (const [key, p] of after) {
    const old = before.get(key);
    if (!old) lines.push(`+ pod/${key}: ${podLine(p)}`);
    else if (old.metadata.uid !== p.metadata.uid) lines.push(`~ pod/${key}: re-created (uid ${old.metadata.uid} → ${p.metadata.uid}): ${podLine(p)}`);
    else if (podLine(old) !== podLine(p)) lines.push(`~ pod/${key}: ${podLine(old)} → ${podLine(p)}`);
  }
  for (const [key, p] of before) if (!after.has(key)) lines.push(`- pod/${key}: was ${podLine(p)}`);
  const ready = (state: typeof a.state, atMs: number): Map<string, string> =>
    new Map(
      state.nodeList(atMs, graceMs).map((n) => {
        const r = n.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? 'Ready' : 'NotReady';
        return [n.metadata.name, `${r}${n.spec.unschedulable ? ',SchedulingDisabled' : ''}`];
      }),
    );
  const nodesBefore = ready(a.state, a.atMs);
  const nodesAfter = ready(b.state, b.atMs);
  for (const [name, s] of nodesAfter) {
    const old = nodesBefore.get(name);
    if (old === undefined) lines.push(`+ node/${name}: ${s}`);
    else if (old !== s) lines.push(`~ node/${name}: ${old} → ${s}`);
  }
  for (const [name, s] of nodesBefore) if (!nodesAfter.has(name)) lines.push(`- node/${name}: was ${s}`);
  // The events recorded in between, as they happened.
  const aSeqMs = 'seq' in from ? seqTime(messages, from.seq) : undefined;
  const bSeqMs = 'seq' in to ? seqTime(messages, to.seq) : undefined;
  const between = messages.filter(
    (m) => !isAtOrBefore(m, from, aSeqMs) && isAtOrBefore(m, to, bSeqMs) && (m.envelope?.type === 'PodEvent' || m.envelope?.type === 'NodeEvent'),
  );
  for (const m of between) {
    const e = m.envelope;
    if (e?.type === 'PodEvent')
      lines.push(`  event ${clock(m.storedMs)} pod/${e.data.namespace}/${e.data.name}: ${e.data.eventType} ${e.data.reason}: ${e.data.message}`);
    if (e?.type === 'NodeEvent') lines.push(`  event ${clock(m.storedMs)} node/${e.data.nodeName}: ${e.data.eventType} ${e.data.reason}: ${e.data.message}`);
  }
  if (lines.length === 1) lines.push('  nothing changed');
  return lines.join('\n');
}
