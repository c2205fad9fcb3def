import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { JetStreamServer } from '#bus';
import { loadConfig } from '#contracts';
import { createLogger } from '#observability';
import { AgentConfig } from './agent.config.js';
import { AgentModule } from './agent.module.js';
import { startAgent } from './agent-start.js';
import { serveStartupHealth } from './server/startup-health.js';

/** Starts of the agent before the process gives up (and its supervisor restarts it). */
const START_ATTEMPTS = 6;

async function bootstrap(): Promise<void> {
  const logger = createLogger('agent');
  // A bad variable fails here, with every bad one listed.
  const config = loadConfig(AgentConfig);
  // Until the bus answers, registration retries with capped back-off (logged by the bus) and
  // /healthz says so; pods already on the node run on, untouched.
  const startup = await serveStartupHealth(
    config.AGENT_PORT,
    config.AGENT_ADDRESS,
    () => `registering node ${config.NODE_NAME}: waiting for the bus at ${config.NATS_URL}`,
  );
  // A start whose bus requests time out (the consumer's creation, the registration's
  // acknowledgement) is closed and made again after a back-off; a refusal ends the process.
  const app = await startAgent<INestApplication>(
    async (track) => {
      // Every route is a GET: no body parser, and the bundle leaves their decoders out (scripts/bundle.mjs).
      const app = await NestFactory.create(AgentModule.forConfig(config), { logger, bodyParser: false });
      track(app);
      app.enableShutdownHooks();
      app.connectMicroservice({ strategy: app.get(JetStreamServer) });
      await app.init();
      // Resolves once the node's assignments are read: the agent says it is up after that.
      await app.startAllMicroservices();
      return app;
    },
    {
      node: config.NODE_NAME,
      attempts: START_ATTEMPTS,
      onRetry: (error, attempt, delayMs) =>
        logger.warn(
          `agent did not start (attempt ${attempt} of ${START_ATTEMPTS}): ${(error as Error).message}; starting it again in ${delayMs} ms`,
          'Bootstrap',
        ),
    },
  );
  await new Promise<void>((resolve) => (startup ? startup.close(() => resolve()) : resolve()));
  await app.listen(config.AGENT_PORT, config.AGENT_ADDRESS);
  logger.log(`agent for node ${config.NODE_NAME} serving on ${await app.getUrl()}`, 'Bootstrap');
}

/** Starts the agent: resolves once it serves, or ends the process when it cannot start. */
export async function runAgent(): Promise<void> {
  try {
    await bootstrap();
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
