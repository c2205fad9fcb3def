import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Bus } from '#bus';
import type { AgentConfig } from '../agent.config.js';
import { PodStartTracker } from './pod-start-tracker.js';
import { REMOVED_MEMORY, StatusReporter } from './status-reporter.service.js';

/** A bus that keeps each subject's last message, as the pods stream does once compacted. */
function lastPerSubjectBus(): { bus: Bus; published: string[]; looked: string[] } {
  const last = new Map<string, unknown>();
  const published: string[] = [];
  const looked: string[] = [];
  const bus = {
    publish: async (subject: string, type: string, data: unknown) => {
      published.push(subject);
      last.set(subject, { type, data });
    },
    compactSoon: () => undefined,
    lastMessage: async (_stream: string, subject: string) => {
      looked.push(subject);
      const envelope = last.get(subject);
      return envelope === undefined ? undefined : { envelope, seq: 1 };
    },
  };
  return { bus: bus as unknown as Bus, published, looked };
}

describe('StatusReporter', () => {
  it('reports a removal once, and keeps only the newest removals in memory', async () => {
    const { bus, published, looked } = lastPerSubjectBus();
    const sut = new StatusReporter({ NODE_NAME: 'n1' } as AgentConfig, bus, new PodStartTracker(() => undefined));
    const pod = (i: number) => ({ uid: `uid-${i}`, namespace: 'default', name: `p${i}` });
    for (let i = 0; i <= REMOVED_MEMORY; i++) await sut.reportRemoved(pod(i));
    assert.equal(published.length, REMOVED_MEMORY + 1);

    // A recent removal is known without asking the bus.
    looked.length = 0;
    await sut.reportRemoved(pod(REMOVED_MEMORY));
    assert.deepEqual(looked, []);
    // The oldest was let go: the bus's last report says it was told, so it is not told twice.
    await sut.reportRemoved(pod(0));
    assert.equal(looked.length, 1);
    assert.equal(published.length, REMOVED_MEMORY + 1);
  });
});
