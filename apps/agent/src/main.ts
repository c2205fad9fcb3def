import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { loadConfig } from '#contracts';
import { createLogger } from '#observability';
import { AgentConfig } from './agent.config.js';
import { AgentModule } from './agent.module.js';

async function bootstrap(): Promise<void> {
  const logger = createLogger('agent');
  // A bad variable fails here, with every bad one listed.
  const config = loadConfig(AgentConfig);
  const app = await NestFactory.create(AgentModule.forConfig(config), { logger });
  app.enableShutdownHooks();
  await app.listen(config.AGENT_PORT, config.AGENT_ADDRESS);
  logger.log(`agent for node ${config.NODE_NAME} serving on ${await app.getUrl()}`, 'Bootstrap');
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
