import type { LogPoint } from '#domain/history';

export class PointError extends Error {
  override readonly name = 'PointError';
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration such as 90s, 5m, 1h30m, in ms; undefined when the text is not one. */
export function parseDuration(text: string): number | undefined {
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) return undefined;
  return parts.reduce((sum, p) => sum + Number(p[1]) * (UNITS[p[2]] ?? 0), 0);
}

/** `--at`: a pods-stream sequence (a resourceVersion), an RFC 3339 time, or a duration ago. */
export function parsePoint(text: string, nowMs: number): LogPoint {
  if (/^\d+$/.test(text)) return { seq: Number(text) };
  const ago = parseDuration(text);
  if (ago !== undefined) return { timeMs: nowMs - ago };
  const time = Date.parse(text);
  if (!Number.isNaN(time) && /^\d{4}-\d{2}-\d{2}T/.test(text)) return { timeMs: time };
  throw new PointError(`--at "${text}" is neither a sequence (123), a time (2026-01-02T15:04:05Z) nor a duration ago (5m)`);
}
