import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { JetStreamServer } from '#bus';
import { loadConfig } from '#contracts';
import { createLogger } from '#observability';
import { AgentConfig } from './agent.config.js';
import { AgentModule } from './agent.module.js';
import { serveStartupHealth } from './server/startup-health.js';

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
  const app = await NestFactory.create(AgentModule.forConfig(config), { logger });
  app.enableShutdownHooks();
  app.connectMicroservice({ strategy: app.get(JetStreamServer) });
  await app.init();
  // Resolves once the node's assignments are read: the agent says it is up after that.
  await app.startAllMicroservices();
  await new Promise<void>((resolve) => (startup ? startup.close(() => resolve()) : resolve()));
  await app.listen(config.AGENT_PORT, config.AGENT_ADDRESS);
  logger.log(`agent for node ${config.NODE_NAME} serving on ${await app.getUrl()}`, 'Bootstrap');
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
