/**
 * The floor under the API's creates, for the api-scale bench: a NestJS app on the same
 * Express adapter and Node flags that, for each POST of a pod, does only what no create can
 * skip. It parses the JSON body, publishes it to JetStream with the API's options (a fresh
 * subject expected empty, a message id), and answers 201 with the object and the sequence as
 * its resourceVersion. There is no validation, defaulting, admission, RBAC, audit or
 * projection. Started as its own process: `NATS_URL=... PORT=... node nest-floor.js`.
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { Body, Controller, HttpCode, Inject, Module, Param, Post, type OnApplicationShutdown } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';

export const FLOOR_STREAM = 'BENCH_FLOOR';
const JS = Symbol('jetstream');

interface PodBody {
  metadata?: Record<string, unknown>;
  [key: string]: unknown;
}

@Controller('api/v1')
class FloorController {
  private readonly encoder = new TextEncoder();

  constructor(@Inject(JS) private readonly js: JetStreamClient) {}

  @Post('namespaces/:namespace/pods')
  @HttpCode(201)
  async create(@Param('namespace') namespace: string, @Body() body: PodBody): Promise<PodBody> {
    const uid = randomUUID();
    const pod = { ...body, metadata: { ...body.metadata, namespace, uid, creationTimestamp: new Date().toISOString() } };
    const envelope = { id: randomUUID(), type: 'PodCreated', time: new Date().toISOString(), data: { pod } };
    const ack = await this.js.publish(`bench.floor.${namespace}.${uid}`, this.encoder.encode(JSON.stringify(envelope)), {
      msgID: envelope.id,
      expect: { lastSubjectSequence: 0 },
    });
    return { ...pod, metadata: { ...pod.metadata, resourceVersion: String(ack.seq) } };
  }
}

async function main(): Promise<void> {
  const nc: NatsConnection = await connect({ servers: process.env.NATS_URL, noAsyncTraces: true });
  await (await jetstreamManager(nc)).streams.add({ name: FLOOR_STREAM, subjects: ['bench.floor.>'] });

  @Module({ controllers: [FloorController], providers: [{ provide: JS, useValue: jetstream(nc) }] })
  class FloorModule implements OnApplicationShutdown {
    async onApplicationShutdown(): Promise<void> {
      await nc.close();
    }
  }

  const app = await NestFactory.create(FloorModule, { logger: ['error'] });
  app.enableShutdownHooks();
  await app.listen(Number(process.env.PORT), '127.0.0.1');
  console.log('nest floor listening');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
