/** A cumulative CPU counter read at one moment. */
export interface CpuSample {
  timeMs: number;
  /** CPU time used so far, nanoseconds. */
  usageNanoseconds: number;
}

/**
 * CPU in use between two samples, in billionths of a core (the Summary API's
 * usageNanoCores): the counter's growth over the time between them. Undefined without two
 * distinct samples, or when the counter went back (a restarted container).
 */
export function nanoCores(previous: CpuSample | undefined, current: CpuSample): number | undefined {
  if (!previous || current.timeMs <= previous.timeMs || current.usageNanoseconds < previous.usageNanoseconds) return undefined;
  return Math.round(((current.usageNanoseconds - previous.usageNanoseconds) * 1000) / (current.timeMs - previous.timeMs));
}

/** CPU as metrics-server writes it: a quantity in nanocores (`12345678n`). */
export function cpuQuantity(nanoCoresInUse: number): string {
  return `${Math.max(0, Math.round(nanoCoresInUse))}n`;
}

/** Memory as metrics-server writes it: a quantity in KiB (`2048Ki`). */
export function memoryQuantity(bytes: number): string {
  return `${Math.max(0, Math.round(bytes / 1024))}Ki`;
}

/** CPU time of the whole machine out of /proc/stat's `cpu` line (jiffies of 1/100 s), busy states only, in nanoseconds. */
export function procStatBusyNanoseconds(procStat: string): number | undefined {
  const line = procStat.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) return undefined;
  // user nice system idle iowait irq softirq steal: idle and iowait are not use.
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = line.trim().split(/\s+/).slice(1).map(Number);
  const jiffies = user + nice + system + irq + softirq + steal;
  return Number.isFinite(jiffies) ? jiffies * 10_000_000 : undefined;
}

/** Memory in use by the machine out of /proc/meminfo: MemTotal − MemAvailable, bytes. */
export function meminfoWorkingSetBytes(meminfo: string): number | undefined {
  const kib = (key: string): number | undefined => {
    const match = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(meminfo);
    return match?.[1] === undefined ? undefined : Number(match[1]);
  };
  const total = kib('MemTotal');
  const available = kib('MemAvailable');
  return total === undefined || available === undefined ? undefined : (total - available) * 1024;
}
