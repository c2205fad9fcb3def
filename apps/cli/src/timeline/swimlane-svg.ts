import { clock, type LaneState, type Swimlanes, type TimelineEntry } from '#domain/history';
import { timelineText } from './timeline-text.js';

const COLORS: Record<LaneState, string> = {
  pending: '#c9c9c9',
  unschedulable: '#f0a35e',
  pulling: '#7fb3e6',
  running: '#5cb85c',
  'back-off': '#d9534f',
  ready: '#2e7d32',
  'not-ready': '#8e44ad',
  silent: '#555555',
};

const escape = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The pod's life as an SVG swimlane chart: one row per lane, time left to right, a legend below. */
export function swimlaneSvg(title: string, chart: Swimlanes): string {
  const labelWidth = 150;
  const plotWidth = 900;
  const rowHeight = 28;
  const top = 40;
  const span = Math.max(1, chart.endMs - chart.startMs);
  const x = (ms: number): number => labelWidth + ((ms - chart.startMs) / span) * plotWidth;
  const height = top + chart.lanes.length * rowHeight + 60;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${labelWidth + plotWidth + 20}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<title>${escape(title)}</title>`,
    `<text x="10" y="20" font-size="14" font-weight="bold">${escape(title)}</text>`,
  ];
  // Time axis: five ticks.
  for (let i = 0; i <= 4; i++) {
    const ms = chart.startMs + (span * i) / 4;
    parts.push(`<line x1="${x(ms)}" y1="${top - 6}" x2="${x(ms)}" y2="${top + chart.lanes.length * rowHeight}" stroke="#eeeeee"/>`);
    parts.push(`<text x="${x(ms)}" y="${top - 10}" text-anchor="middle" fill="#666666">${clock(ms).slice(0, 8)}</text>`);
  }
  chart.lanes.forEach((lane, row) => {
    const y = top + row * rowHeight;
    parts.push(`<g class="lane" data-lane="${escape(lane.name)}">`);
    parts.push(`<text x="10" y="${y + 18}">${escape(lane.name)}</text>`);
    for (const s of lane.segments) {
      const w = Math.max(1, x(s.toMs) - x(s.fromMs));
      parts.push(
        `<rect class="${s.state}" x="${x(s.fromMs).toFixed(1)}" y="${y + 4}" width="${w.toFixed(1)}" height="${rowHeight - 8}" fill="${COLORS[s.state]}"><title>${escape(`${s.state} ${clock(s.fromMs)}–${clock(s.toMs)}${s.label ? `: ${s.label}` : ''}`)}</title></rect>`,
      );
    }
    for (const m of lane.marks) {
      const color = m.kind === 'crashed' || m.kind === 'failed' || m.kind === 'evicted' ? '#b71c1c' : '#222222';
      parts.push(
        `<path class="mark ${m.kind}" d="M${x(m.atMs).toFixed(1)} ${y + 2} l5 ${rowHeight / 2 - 2} l-5 ${rowHeight / 2 - 2} l-5 ${-(rowHeight / 2 - 2)} z" fill="${color}"><title>${escape(`${m.label} at ${clock(m.atMs)}`)}</title></path>`,
      );
    }
    parts.push('</g>');
  });
  const legendY = top + chart.lanes.length * rowHeight + 30;
  Object.entries(COLORS).forEach(([state, color], i) => {
    parts.push(`<rect x="${labelWidth + i * 110}" y="${legendY - 10}" width="12" height="12" fill="${color}"/>`);
    parts.push(`<text x="${labelWidth + i * 110 + 16}" y="${legendY}">${state}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}

/** A page with the chart above the timeline's table. */
export function swimlaneHtml(title: string, chart: Swimlanes, entries: TimelineEntry[]): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${escape(title)}</title>
<style>body{font-family:sans-serif;margin:20px} pre{font-size:12px;background:#f7f7f7;padding:10px;overflow-x:auto}</style></head>
<body>
${swimlaneSvg(title, chart)}
<pre>${escape(timelineText(entries))}</pre>
</body>
</html>
`;
}
