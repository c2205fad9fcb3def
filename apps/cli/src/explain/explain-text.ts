import { clock, goDuration, type PodExplanation, type SchedulingDecision } from '#domain/history';
import { podStatusColumn, podRestartsColumn } from '../pod-columns.js';
import { renderTable } from '../table.js';

function decisionText(d: SchedulingDecision): string[] {
  const recorded = d.kind === 'PodScheduled' ? `bound to ${d.recorded}` : `FailedScheduling: ${d.recorded}`;
  const verdict = d.matches ? 'the re-run agrees' : `MISMATCH: the re-run gives ${d.recomputed}`;
  const table = renderTable(
    ['NODE', 'READY', 'FITS', 'SCORE', 'WHY NOT'],
    d.nodes.map((n) => [
      n.name,
      `${n.ready ? 'yes' : 'no'}${n.readiness === 'heartbeats' ? '' : ` (${n.readiness})`}`,
      n.reasons.length === 0 ? 'yes' : 'no',
      n.score
        ? `${n.score.total} = ${n.score.leastAllocated} least-allocated + ${n.score.balancedAllocation} balanced + ${n.score.taintToleration} taint`
        : '-',
      n.reasons.join(', ') || '-',
    ]),
  );
  return [`  pods/${d.seq} at ${clock(d.atMs)}: ${recorded} (${verdict})`, ...table.split('\n').map((l) => `    ${l}`)];
}

const exit = (code: number | undefined, reason: string | undefined): string =>
  code === undefined ? 'died' : `exited ${code}${reason && reason !== 'Error' ? ` (${reason})` : ''}`;

/** What `jetctl explain` prints. */
export function explainText(x: PodExplanation): string {
  const lines: string[] = [];
  const at = `${x.atSeq !== undefined ? `pods seq ${x.atSeq}, ` : ''}${new Date(x.atMs).toISOString()}`;
  lines.push(`Pod ${x.namespace}/${x.name}${x.uid ? ` (uid ${x.uid})` : ''} as of ${at}`);
  if (x.pod) {
    lines.push(
      `  status: ${podStatusColumn(x.pod)}, phase ${x.pod.status.phase}, node ${x.pod.spec.nodeName ?? '<none>'}, restarts ${podRestartsColumn(x.pod)}`,
    );
  } else if (x.uid) lines.push('  status: gone from the cluster at this point');
  if (x.scheduling.length > 0) {
    lines.push('', "Scheduling (the scheduler's filters and scores re-run on the node table of that moment):");
    for (const d of x.scheduling) lines.push(...decisionText(d));
  }
  for (const c of x.containers) {
    lines.push('', `Container ${c.name} (restarts, back-off by the agent's own back-off code):`);
    for (const r of c.restarts) {
      const wait = r.waitMs === 0 ? 'no back-off' : `back-off ${goDuration(r.waitMs)}`;
      const started = r.startedMs === undefined ? '' : `; started ${clock(r.startedMs)}`;
      lines.push(
        `  restart ${r.restartCount}: ${exit(r.exitCode, r.exitReason)} at ${clock(r.diedMs)}, ${wait} → next start ${clock(r.nextStartMs)}${started}${r.fresh ? ' (spec changed: back-off reset)' : ''}`,
      );
    }
    if (c.pending?.final) lines.push(`  ${exit(c.pending.exitCode, c.pending.exitReason)} at ${clock(c.pending.diedMs)}: not restarted (restartPolicy)`);
    else if (c.pending) {
      const p = c.pending;
      const waiting = p.nextStartMs > x.atMs ? ' (waiting: CrashLoopBackOff)' : '';
      lines.push(
        `  after restart ${p.restartCount - 1}: ${exit(p.exitCode, p.exitReason)} at ${clock(p.diedMs)}, back-off ${goDuration(p.waitMs)} → next start ${clock(p.nextStartMs)}${waiting}`,
      );
    }
  }
  const section = (title: string, items: Array<{ atMs: number; text: string }>): void => {
    if (items.length === 0) return;
    lines.push('', `${title}:`, ...items.map((i) => `  ${clock(i.atMs)} ${i.text}`));
  };
  section('Probes', x.probes);
  section('Image pulls', x.pulls);
  section('Node and eviction', x.evictions);
  lines.push('', x.findings.length === 0 ? 'Findings: none (the log and the re-run agree)' : 'Findings:');
  for (const f of x.findings) lines.push(`  - ${f}`);
  return lines.join('\n');
}
