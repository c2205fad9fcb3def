import { ConsoleLogger, type LogLevel } from '@nestjs/common';

/**
 * Nest's ConsoleLogger with each human-readable line's time in ISO 8601, UTC, to the
 * millisecond (as in the JSON lines' `timestamp`), rather than in the machine's locale and
 * time zone. Formatting by locale would also load ICU's locale data into every process.
 */
class IsoTimeLogger extends ConsoleLogger {
  protected override getTimestamp(): string {
    return new Date().toISOString();
  }
}

/**
 * The one logger: Nest's ConsoleLogger, JSON lines when LOG_FORMAT=json (the lab and
 * anything feeding a log pipeline), human-readable otherwise.
 */
export function createLogger(appName: string): ConsoleLogger {
  const levels: LogLevel[] = process.env.LOG_LEVEL === 'debug' ? ['fatal', 'error', 'warn', 'log', 'debug'] : ['fatal', 'error', 'warn', 'log'];
  return new IsoTimeLogger(appName, { json: process.env.LOG_FORMAT === 'json', logLevels: levels, prefix: 'jetlet' });
}

/** The `ns/name (uid)` every log line about a pod carries. */
export function podRef(pod: { namespace?: string; name: string; uid?: string }): string {
  return `${pod.namespace ?? 'default'}/${pod.name}${pod.uid ? ` (${pod.uid})` : ''}`;
}
