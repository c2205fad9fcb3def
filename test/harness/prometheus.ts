/** One sample of the Prometheus text exposition format. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A parsed exposition: every metric family's type and its samples. */
export interface Exposition {
  types: Map<string, string>;
  samples: Sample[];
  /** The value of the sample with this name and exactly these labels, or undefined. */
  value(name: string, labels?: Record<string, string>): number | undefined;
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})?\\s+(\\S+)(?:\\s+-?\\d+)?$`);
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(?:,\s*|$)/y;
const SUFFIXES: Record<string, string[]> = { histogram: ['_bucket', '_sum', '_count'], summary: ['_sum', '_count', ''], counter: ['', '_total'] };

/** A sample value; NaN and Inf in any case, as Prometheus reads them (prom-client writes `Nan`). */
function parseValue(raw: string, line: string): number {
  const lower = raw.toLowerCase();
  if (lower === '+inf' || lower === 'inf') return Infinity;
  if (lower === '-inf') return -Infinity;
  if (lower === 'nan') return NaN;
  const value = Number(raw);
  if (raw === '' || Number.isNaN(value)) throw new Error(`bad sample value in: ${line}`);
  return value;
}

function parseLabels(raw: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < raw.length) {
    const match = LABEL.exec(raw);
    if (!match?.[1] || match[2] === undefined) throw new Error(`bad labels in: ${line}`);
    labels[match[1]] = match[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  }
  return labels;
}

/**
 * A strict reader of the Prometheus text format (version 0.0.4): HELP and TYPE comments,
 * samples with optional labels and timestamp. Throws on a malformed line, on a TYPE given
 * twice, and on a sample of no declared family, so "it parses" means something.
 */
export function parsePrometheusText(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const type = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`).exec(line);
      if (type?.[1] && type[2]) {
        if (types.has(type[1])) throw new Error(`TYPE of ${type[1]} given twice`);
        types.set(type[1], type[2]);
      } else if (!new RegExp(`^# HELP ${NAME} `).test(line) && !/^# (?!HELP|TYPE)/.test(line)) throw new Error(`bad comment: ${line}`);
      continue;
    }
    const match = SAMPLE.exec(line);
    if (!match?.[1] || match[3] === undefined) throw new Error(`bad sample: ${line}`);
    const name = match[1];
    const family = [...types.entries()].find(([base, type]) => (SUFFIXES[type] ?? ['']).some((suffix) => `${base}${suffix}` === name));
    if (!family) throw new Error(`sample ${name} belongs to no declared metric family`);
    samples.push({ name, labels: parseLabels(match[2] ?? '', line), value: parseValue(match[3], line) });
  }
  return {
    types,
    samples,
    value(name, labels = {}) {
      const wanted = JSON.stringify(Object.entries(labels).sort());
      return samples.find((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === wanted)?.value;
    },
  };
}
