/**
 * A floor under the API's creates, for the api-scale bench: a NestJS app on the same
 * Express adapter, Node flags and Express settings (no ETag, no X-Powered-By) that, for each
 * POST of a pod, does only the steps every create takes. It parses the JSON body, publishes
 * it to JetStream with the API's options (a fresh subject expected empty, a message id, the
 * bench's 30 s timeout), and answers 201 with the object and the sequence as its
 * resourceVersion. With POD_BYTES, the object is padded to that size, a stored pod's, so the
 * floor moves as many bytes as the API does. There is no validation, defaulting, admission,
 * RBAC, audit or projection, and no batching of writes beyond the NATS client's own.
 * Started as its own process: `NATS_URL=... PORT=... [POD_BYTES=...] node nest-floor.js`.
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { Body, Controller, HttpCode, Inject, Module, Param, Post, type OnApplicationShutdown } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';

export const FLOOR_STREAM = 'BENCH_FLOOR';
const JS = Symbol('jetstream');
const POD_BYTES = Number(process.env.POD_BYTES ?? 0);
const TIMEOUT_MS = 30_000;

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
    const metadata: Record<string, unknown> = { ...body.metadata, namespace, uid, creationTimestamp: new Date().toISOString() };
    const pod = { ...body, metadata };
    const short = POD_BYTES - Buffer.byteLength(JSON.stringify(pod));
    if (short > 0) metadata.annotations = { 'bench.jetlet.io/pad': 'x'.repeat(short) };
    const envelope = { id: randomUUID(), type: 'PodCreated', time: new Date().toISOString(), data: { pod } };
    const ack = await this.js.publish(`bench.floor.${namespace}.${uid}`, this.encoder.encode(JSON.stringify(envelope)), {
      msgID: envelope.id,
      expect: { lastSubjectSequence: 0 },
      timeout: TIMEOUT_MS,
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

  const app = await NestFactory.create<NestExpressApplication>(FloorModule, { logger: ['error'] });
  app.set('etag', false);
  app.disable('x-powered-by');
  app.enableShutdownHooks();
  await app.listen(Number(process.env.PORT), '127.0.0.1');
  console.log('nest floor listening');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
