import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { STREAMS, type AnyEnvelope, type Pod } from '#contracts';
import type { RecordedMessage } from '#domain/history';
import type { StreamReader } from '../streams/stream-reader.js';
import { followPod } from './pod-progress.js';

const UID = '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f';
const POD = { metadata: { name: 'web', namespace: 'default', uid: UID, resourceVersion: '1' } } as unknown as Pod;

/** A reader whose streams the test feeds: `deliver` hands a message to every follower. */
class FedReader {
  readonly stored: RecordedMessage[] = [];
  private readonly followers: Array<(m: RecordedMessage) => void> = [];
  private seq = 0;

  follow(_query: unknown, onMessage: (m: RecordedMessage) => void): Promise<() => Promise<void>> {
    this.followers.push(onMessage);
    return Promise.resolve(() => Promise.resolve());
  }

  /** Only what was stored so far, as a read of the streams would give. */
  readAll(): Promise<RecordedMessage[]> {
    return Promise.resolve([...this.stored]);
  }

  deliver(stream: string, envelope: object): void {
    const m = { stream, subject: 's', seq: ++this.seq, storedMs: this.seq, envelope: envelope as AnyEnvelope };
    this.stored.push(m);
    for (const f of this.followers) f(m);
  }
}

const event = (reason: string, message: string): object => ({ type: 'PodEvent', data: { uid: UID, nodeName: 'n1', reason, message } });
const running = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'main', state: { running: {} } }] };
const report = { type: 'PodStatusReported', data: { uid: UID, namespace: 'default', name: 'web', nodeName: 'n1', status: running, removed: false } };

describe('followPod', () => {
  it("prints a container's Started before Ready when the event is stored just after the report that says it runs", async () => {
    const reader = new FedReader();
    const lines: string[] = [];
    const following = followPod(reader as unknown as StreamReader, POD, 1, (line) => lines.push(line), 10_000);
    await Promise.resolve();
    reader.deliver(STREAMS.events, event('Created', 'Created container main'));
    reader.deliver(STREAMS.pods, report);
    // The report is read and the earlier steps replayed before the event is stored.
    await new Promise((resolve) => setImmediate(resolve));
    reader.deliver(STREAMS.events, event('Started', 'Started container main'));
    await following;
    assert.deepEqual(lines, [
      'pod/web: Scheduled to node n1',
      'pod/web: Created: Created container main',
      'pod/web: Started: Started container main',
      'pod/web: Ready',
    ]);
  });
});
