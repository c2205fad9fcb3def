import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { errors as natsErrors } from '@nats-io/transport-node';
import { BusUnavailableError } from '#bus';
import { AgentStartError, startAgent } from './agent-start.js';

/** An application as the start builds it: it records being closed. */
class FakeApp {
  closed = false;
  constructor(readonly attempt: number) {}
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

/** Lets pending promise callbacks run. */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

describe('startAgent', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
  afterEach(() => mock.timers.reset());

  const options = { node: 'hollow-7', attempts: 4, initialMs: 1000, maxMs: 4000 };

  it('closes a start whose bus request timed out and starts the agent again after a growing back-off', async () => {
    const apps: FakeApp[] = [];
    const retries: Array<[number, number]> = [];
    const started = startAgent<FakeApp>(
      async (track) => {
        const app = new FakeApp(apps.length + 1);
        apps.push(app);
        track(app);
        // The consumer's creation times out (a JetStream API request), then the registration's acknowledgement.
        if (app.attempt === 1) throw new natsErrors.TimeoutError();
        if (app.attempt === 2) throw new BusUnavailableError('JetStream did not take the write: timeout');
        return app;
      },
      { ...options, onRetry: (_error, attempt, delayMs) => retries.push([attempt, delayMs]) },
    );
    await settle();
    assert.equal(apps.length, 1);
    assert.equal(apps[0]?.closed, true, 'the failed start is closed before the next');
    mock.timers.tick(999);
    await settle();
    assert.equal(apps.length, 1, 'nothing before the back-off ends');
    mock.timers.tick(1);
    await settle();
    assert.equal(apps.length, 2);
    mock.timers.tick(2000);
    await settle();
    const sut = await started;
    assert.equal(sut, apps[2]);
    assert.equal(sut.closed, false);
    assert.deepEqual(retries, [
      [1, 1000],
      [2, 2000],
    ]);
  });

  it('tells of a failed attempt before it closes that attempt, so a close that hangs is seen', async () => {
    const heard: string[] = [];
    const started = startAgent<FakeApp>(
      async (track) => {
        const app = new FakeApp(1);
        app.close = () => {
          heard.push('close');
          return new Promise<void>(() => undefined);
        };
        track(app);
        throw new natsErrors.TimeoutError();
      },
      { ...options, onFailed: (error, attempt) => heard.push(`failed ${attempt}: ${(error as Error).message}`) },
    );
    await settle();
    assert.deepEqual(heard, ['failed 1: timeout', 'close']);
    void started;
  });

  it('gives up after the last attempt with an error naming the node and the last cause', async () => {
    const apps: FakeApp[] = [];
    const started = startAgent<FakeApp>(async (track) => {
      const app = new FakeApp(apps.length + 1);
      apps.push(app);
      track(app);
      throw new natsErrors.TimeoutError();
    }, options);
    started.catch(() => undefined);
    for (const wait of [1000, 2000, 4000]) {
      await settle();
      mock.timers.tick(wait);
    }
    const error: unknown = await started.then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof AgentStartError);
    assert.equal(error.node, 'hollow-7');
    assert.equal(error.attempts, 4);
    assert.ok(error.cause instanceof natsErrors.TimeoutError);
    assert.match(error.message, /node hollow-7 did not start after 4 attempts: timeout/);
    assert.equal(apps.length, 4);
    assert.ok(apps.every((a) => a.closed));
  });

  it('does not retry an error that is not the bus being slow or away', async () => {
    let attempts = 0;
    const started = startAgent<FakeApp>(async () => {
      attempts++;
      throw new Error('consumer config refused');
    }, options);
    await assert.rejects(started, (error: unknown) => error instanceof AgentStartError && error.attempts === 1);
    assert.equal(attempts, 1);
  });

  it('stops retrying once the process stops', async () => {
    const stopping = new AbortController();
    let attempts = 0;
    const started = startAgent<FakeApp>(
      async () => {
        attempts++;
        throw new natsErrors.TimeoutError();
      },
      { ...options, signal: stopping.signal },
    );
    started.catch(() => undefined);
    await settle();
    stopping.abort();
    await assert.rejects(started, AgentStartError);
    assert.equal(attempts, 1);
  });
});
