import 'reflect-metadata';
import { rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import type { DynamicModule, INestApplicationContext, INestMicroservice } from '@nestjs/common';
import type { AsyncMicroserviceOptions } from '@nestjs/microservices';
import { Counter } from 'prom-client';
import { Bus, busTls, JetStreamServer } from '#bus';
import { identityName, loadConfig, type HollowIdentity } from '#contracts';
import { createLogger, metricsRegistry, serveMetrics } from '#observability';
import { AgentConfig } from './agent.config.js';
import { AgentModule } from './agent.module.js';
import { startAgent, type Closable } from './agent-start.js';
import { HollowConfig } from './hollow.config.js';
import { packModules, releaseBootstrapState, releaseContainer } from './hollow-module.js';

/** Agents started at once: each opens its consumer (and, with HOLLOW_CONNECTIONS=per-node, connects and checks the streams), which the server serialises. */
const START_CONCURRENCY = 25;
/** How often a process still starting its nodes says how far it is, and how many of the nodes it waits on it names. */
const PROGRESS_EVERY_MS = 30_000;
const PROGRESS_NAMES = 10;
const startRetries = new Counter({
  name: 'jetlet_hollow_agent_start_retries_total',
  help: 'Hollow agents started again because a bus request of their start-up failed for now (a timeout, JetStream not ready)',
  registers: [metricsRegistry],
});

/**
 * Hollow nodes, as kubemark's HollowNode: HOLLOW_NODES real agents in one process, each
 * with its own registration, heartbeats, desired state (its own durable consumer), reconciler
 * and PLEG, over the in-memory FakeRuntime. No HTTP servers (the apps never listen), no
 * Docker. By default the agents ride one NATS connection, the process's (HOLLOW_CONNECTIONS);
 * the rest of the environment (NATS_URL, NATS_NKEY_SEED_FILE, HEARTBEAT_SECONDS, ...) is shared.
 */
async function bootstrap(): Promise<void> {
  const logger = createLogger('hollow');
  // Bad variables fail here, listed, before any agent starts.
  const hollow = loadConfig(HollowConfig);
  const rootDir = process.env.AGENT_ROOT_DIR || join(tmpdir(), 'jetlet-hollow');
  const nodes = Array.from({ length: hollow.HOLLOW_NODES }, (_, i) => hollow.HOLLOW_FIRST_INDEX + i);
  const configs = nodes.map((i) => {
    const name = `${hollow.HOLLOW_PREFIX}-${i}`;
    return { i, config: loadConfig(AgentConfig, { ...process.env, NODE_NAME: name, RUNTIME: 'fake', AGENT_ROOT_DIR: join(rootDir, name) }) };
  });

  // With NATS_NKEY_SEED_FILE, every agent connects as the process's identity (`jetctl hollow
  // credentials`), which the server allows exactly what these nodes are allowed.
  const identity: HollowIdentity = { kind: 'hollow', prefix: hollow.HOLLOW_PREFIX, first: hollow.HOLLOW_FIRST_INDEX, count: hollow.HOLLOW_NODES };
  if (process.env.NATS_NKEY_SEED_FILE) logger.log(`connecting as NATS identity ${identityName(identity)}`, 'Hollow');

  /** Every agent's application, or what is kept of it to close it (releaseContainer). */
  const contexts: Closable[] = [];
  let connection: Bus | undefined;
  let metricsServer: Server | undefined;
  let stopping: Promise<void> | undefined;
  /** Aborted on stop: an agent waiting to be started again is not. */
  const starting = new AbortController();
  const stopAll = (): Promise<void> =>
    (stopping ??= (async () => {
      starting.abort();
      // One handler for the whole process: each context closes as a single agent's would on SIGTERM.
      const results = await Promise.allSettled(contexts.map((c) => c.close()));
      for (const r of results) if (r.status === 'rejected') logger.error(`closing an agent failed: ${String(r.reason)}`, 'Hollow');
      // The shared connection is drained last, once no agent publishes on it.
      await connection?.close().catch((error: unknown) => logger.error(`closing the NATS connection failed: ${String(error)}`, 'Hollow'));
      await Promise.all(configs.map(({ config }) => rm(config.AGENT_ROOT_DIR, { recursive: true, force: true })));
      // A scraper's kept-alive connection would hold the close open: end them with it.
      metricsServer?.closeAllConnections();
      await new Promise((resolve) => (metricsServer ? metricsServer.close(resolve) : resolve(undefined)));
    })());
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      logger.log(`${signal}: stopping ${contexts.length} hollow nodes`, 'Hollow');
      stopAll().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
  }

  if (hollow.HOLLOW_METRICS_PORT !== undefined) {
    // The process's registry: its own metrics, the shared connection's bus metrics and, with HOLLOW_METRICS=shared, every node's series labelled node.
    metricsServer = await serveMetrics(hollow.HOLLOW_METRICS_PORT, hollow.HOLLOW_METRICS_ADDRESS);
    const address = metricsServer.address() as AddressInfo;
    logger.log(`serving /metrics on ${address.address}:${address.port}`, 'Hollow');
  }
  const startedAt = performance.now();
  const first = configs[0]?.config;
  if (hollow.HOLLOW_CONNECTIONS === 'shared' && first) {
    // One connection and one stream check for the process; each agent's Bus keeps its own consumers and outbox.
    connection = await Bus.connect({
      servers: first.NATS_URL,
      streamReplicas: first.STREAM_REPLICAS,
      name: `jetlet-hollow-${hollow.HOLLOW_PREFIX}-${hollow.HOLLOW_FIRST_INDEX}`,
      source: { component: 'agent' },
      credentials: { identity, seedFile: first.NATS_NKEY_SEED_FILE },
      tls: busTls(first),
    });
    await connection.ensureStreams();
  }
  const queue = [...configs];
  /** The nodes whose agents are starting now, reported while the process starts. */
  const inStart = new Map<string, string>();
  let running = 0;
  const worker = async (): Promise<void> => {
    for (let next = queue.shift(); next !== undefined && stopping === undefined; next = queue.shift()) {
      const { config, i } = next;
      inStart.set(config.NODE_NAME, 'building');
      const agent = AgentModule.forConfig(config, i, identity, connection, hollow.HOLLOW_METRICS === 'shared' ? 'process' : 'own');
      // A start that fails for now (a bus request timed out under load) is undone and tried again for this node alone.
      const app = await startAgent<INestApplicationContext>(
        async (track) => {
          // In `contexts` while it starts, so a stop meanwhile closes it too; out of it again if its start fails.
          let built: INestApplicationContext | undefined;
          try {
            return await startOne(agent, (app) => {
              built = app;
              track(app);
              contexts.push(app);
              inStart.set(config.NODE_NAME, 'listening');
            });
          } catch (error) {
            if (built) contexts.splice(contexts.indexOf(built), 1);
            throw error;
          }
        },
        {
          node: config.NODE_NAME,
          attempts: hollow.HOLLOW_START_ATTEMPTS,
          signal: starting.signal,
          onFailed: (error) => inStart.set(config.NODE_NAME, `closing after ${(error as Error).message}`),
          onRetry: (error, attempt, delayMs) => {
            startRetries.inc();
            logger.warn(
              `agent of node ${config.NODE_NAME} did not start (attempt ${attempt} of ${hollow.HOLLOW_START_ATTEMPTS}): ${(error as Error).message}; starting it again in ${delayMs} ms`,
              'Hollow',
            );
          },
        },
      );
      if (hollow.HOLLOW_MODULES === 'packed' && hollow.HOLLOW_CONTAINER === 'released') {
        // The agent runs on without Nest's container: only what closing it needs is kept.
        contexts[contexts.indexOf(app)] = releaseContainer(app as INestMicroservice);
      } else if (hollow.HOLLOW_BOOTSTRAP_STATE === 'released') releaseBootstrapState(app);
      inStart.delete(config.NODE_NAME);
      running++;
    }
  };
  /** Builds and runs one agent's application; `track` gets it as soon as it exists, so a failed start can be closed. */
  const startOne = async (agent: DynamicModule, track: (app: INestApplicationContext) => void): Promise<INestApplicationContext> => {
    if (hollow.HOLLOW_MODULES === 'packed') {
      // A microservice alone, with no HTTP application (router, middleware, adapter) around it:
      // a hollow agent never listens, so only its message handlers are registered.
      const app = await NestFactory.createMicroservice<AsyncMicroserviceOptions>(packModules(agent, { httpRoutes: false }), {
        inject: [JetStreamServer],
        useFactory: (strategy: JetStreamServer) => ({ strategy }),
        logger,
        abortOnError: false,
      });
      track(app);
      await app.listen();
      return app;
    }
    // An application that never listens on HTTP: its handlers run on the transport only.
    const app = await NestFactory.create(agent, { logger, abortOnError: false });
    track(app);
    app.connectMicroservice({ strategy: app.get(JetStreamServer) });
    await app.init();
    await app.startAllMicroservices();
    return app;
  };
  // A start that takes long says which nodes it still waits on.
  const progress = setInterval(() => {
    const names = [...inStart].map(([node, phase]) => `${node} (${phase})`);
    logger.log(
      `hollow nodes: ${running} of ${configs.length} up; still starting ${names.slice(0, PROGRESS_NAMES).join(', ')}` +
        (names.length > PROGRESS_NAMES ? ` and ${names.length - PROGRESS_NAMES} more` : ''),
      'Hollow',
    );
  }, PROGRESS_EVERY_MS);
  try {
    await Promise.all(Array.from({ length: Math.min(START_CONCURRENCY, configs.length) }, worker));
  } catch (error) {
    await stopAll();
    throw error;
  } finally {
    clearInterval(progress);
  }
  if (stopping !== undefined) return;
  const last = configs.at(-1)?.config.NODE_NAME;
  logger.log(`${contexts.length} hollow nodes running (${first?.NODE_NAME} .. ${last}) in ${((performance.now() - startedAt) / 1000).toFixed(1)} s`, 'Hollow');
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
