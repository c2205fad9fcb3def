/** Left-aligned columns separated by three spaces, as kubectl prints them. */
export function renderTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] + 3)))
      .join('')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** kubectl's AGE column: 45s, 3m, 2h, 5d. */
export function age(timestamp: string | undefined, nowMs: number): string {
  if (!timestamp) return '<unknown>';
  const seconds = Math.max(0, Math.floor((nowMs - Date.parse(timestamp)) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 3600 * 2) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86400 * 2) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86400)}d`;
}
