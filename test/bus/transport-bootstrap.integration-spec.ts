import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Injectable, Module, type INestApplication, type OnApplicationBootstrap } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventPattern, Payload } from '@nestjs/microservices';
import { Bus, BusModule, ContractPipe, JetStreamServer, MessageController } from '#bus';
import { STREAMS, SUBJECTS, type AnyEnvelope } from '#contracts';
import { NatsServer } from '../harness/processes.js';

/** A promise and the function that settles it. */
function signal(): { promise: Promise<void>; fire: () => void } {
  let fire: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => (fire = resolve));
  return { promise, fire };
}

/**
 * When an application's own bootstrap hooks run against the consumers of the JetStream
 * transport: after every consumer caught up (the default), or while they catch up
 * (`catchUpBeforeBootstrap: false`, the agent's), and what `caughtUp` says when the
 * consumers cannot open. A real nats-server and a real Nest application.
 */
describe('the JetStream transport at application bootstrap', () => {
  let nats: NatsServer;
  let writer: Bus;
  const node = `bootstrap-${randomUUID().slice(0, 8)}`;

  before(async () => {
    nats = await NatsServer.start();
    writer = await Bus.connect({ servers: nats.url, name: 'bootstrap-writer', source: { component: 'scheduler' } });
    await writer.ensureStreams();
    const uid = randomUUID();
    await writer.publish(
      SUBJECTS.nodeHeartbeat(node),
      'NodeHeartbeat',
      { nodeName: node, renewTime: new Date().toISOString(), runningPods: 0 },
      { correlationId: uid },
    );
  });

  after(async () => {
    await writer?.close();
    await nats?.stop();
  });

  /** An application with one consumer of `stream`, whose handler waits for `gate`, and a bootstrap hook that says when it runs. */
  async function start(stream: string, catchUpBeforeBootstrap: boolean | undefined) {
    const handled = signal();
    const gate = signal();
    const hookRan = signal();

    @MessageController()
    class Handler {
      @EventPattern<string>(SUBJECTS.nodeHeartbeat(node), { stream, durable: `bootstrap-${randomUUID().slice(0, 8)}`, deliver: 'all' })
      async heartbeat(@Payload(ContractPipe) envelope: AnyEnvelope): Promise<void> {
        assert.equal(envelope.type, 'NodeHeartbeat');
        handled.fire();
        await gate.promise;
      }
    }

    @Injectable()
    class Hook implements OnApplicationBootstrap {
      onApplicationBootstrap(): void {
        hookRan.fire();
      }
    }

    @Module({
      imports: [
        BusModule.forRoot(
          () => ({ servers: nats.url, name: 'bootstrap-reader', source: { component: 'scheduler' } }),
          () => ({ node, ...(catchUpBeforeBootstrap === undefined ? {} : { catchUpBeforeBootstrap }) }),
        ),
      ],
      controllers: [Handler],
      providers: [Hook],
    })
    class Root {}

    const app: INestApplication = await NestFactory.create(Root, { logger: false });
    const server = app.get(JetStreamServer);
    app.connectMicroservice({ strategy: server });
    const initialised = app.init();
    // Settles with the application's start: a failure is looked at by the test, not left unhandled.
    initialised.catch(() => undefined);
    const caughtUp = server.caughtUp(SUBJECTS.nodeHeartbeat(node));
    return { app, initialised, caughtUp, handled: handled.promise, hookRan: hookRan.promise, release: gate.fire };
  }

  /** `promise`, or a failure naming `what` if it has not settled in 10 s: a test that fails stops its application instead of hanging. */
  function within<T>(promise: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not settled in 10 s`)), 10_000)));
    return Promise.race([promise, late]).finally(() => clearTimeout(timer));
  }

  /** Whether `promise` has settled by the time the event loop has run what is queued now. */
  async function settled(promise: Promise<unknown>): Promise<boolean> {
    let done = false;
    promise.then(
      () => (done = true),
      () => (done = true),
    );
    await new Promise((resolve) => setImmediate(resolve));
    return done;
  }

  it('by default runs the hooks only once every consumer has caught up', async () => {
    const sut = await start(STREAMS.nodes, undefined);
    try {
      await within(sut.handled, 'the handler getting the message');
      assert.equal(await settled(sut.hookRan), false, 'a hook ran while a consumer was still catching up');
      sut.release();
      await within(sut.initialised, "the application's init");
      await within(sut.hookRan, 'the bootstrap hook');
      await within(sut.caughtUp, 'caughtUp');
    } finally {
      sut.release();
      await sut.app.close();
    }
  });

  it('with catchUpBeforeBootstrap false runs the hooks while the consumers catch up; caughtUp says when they have', async () => {
    const sut = await start(STREAMS.nodes, false);
    try {
      await within(sut.handled, 'the handler getting the message');
      await within(sut.initialised, "the application's init");
      await within(sut.hookRan, 'the bootstrap hook');
      assert.equal(await settled(sut.caughtUp), false, 'caught up though its handler has not finished');
      sut.release();
      await within(sut.caughtUp, 'caughtUp');
    } finally {
      sut.release();
      await sut.app.close();
    }
  });

  it('rejects caughtUp with the error that kept the consumers from opening, and the application starts no further', async () => {
    const sut = await start('NO_SUCH_STREAM', false);
    try {
      await within(sut.initialised, "the application's init");
      await assert.rejects(within(sut.caughtUp, 'caughtUp'), /stream not found/i);
      // Asked for after the failure, it fails at once too.
      await assert.rejects(within(sut.app.get(JetStreamServer).caughtUp(SUBJECTS.nodeHeartbeat(node)), 'a later caughtUp'), /stream not found/i);
      await assert.rejects(within(sut.app.startAllMicroservices(), 'the microservice start'), /stream not found/i);
    } finally {
      await sut.app.close();
    }
  });
  it('stops a consumer that opens after the transport closed, and its start fails', async () => {
    const bus = await Bus.connect({ servers: nats.url, name: 'bootstrap-closing', source: { component: 'scheduler' } });
    try {
      // The consumer's open is held until the transport has closed, as when another part of the start fails meanwhile.
      const gate = signal();
      let stopped = false;
      const open = bus.open.bind(bus);
      bus.open = async (spec, onMessage) => {
        await gate.promise;
        const subscription = await open(spec, onMessage);
        return {
          caughtUp: subscription.caughtUp,
          stop: () => {
            stopped = true;
            return subscription.stop();
          },
        };
      };
      const server = new JetStreamServer(bus, { node });
      server.addHandler(SUBJECTS.nodeHeartbeat(node), () => Promise.resolve(), true, {
        stream: STREAMS.nodes,
        durable: `closing-${randomUUID().slice(0, 8)}`,
        deliver: 'all',
      });
      const started = server.start();
      started.catch(() => undefined);
      await server.close();
      gate.fire();
      await assert.rejects(within(started, 'the start'), /closed while the consumer/);
      assert.equal(stopped, true, 'the consumer that opened after close still runs');
      await assert.rejects(within(server.caughtUp(SUBJECTS.nodeHeartbeat(node)), 'caughtUp'), /closed while the consumer/);
    } finally {
      await bus.close();
    }
  });
});
