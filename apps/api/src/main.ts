import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { JetStreamServer } from '#bus';
import { createLogger } from '#observability';
import { requestMetrics } from './metrics/request-metrics.js';
import { isJsonBody } from './validation/json-body.js';
import { routeUpgrades } from './streaming/upgrade.js';
import { keepIdleConnections } from './http/keep-alive.js';

async function bootstrap(): Promise<void> {
  const logger = createLogger('api');
  // The module reads and validates configuration on import: a bad variable fails here, listed.
  const { ApiModule } = await import('./api.module.js');
  const { API_CONFIG } = await import('./api.constants.js');
  const { AuthMiddleware } = await import('./auth/auth.middleware.js');
  const { loadConfig } = await import('#contracts');
  const { ApiConfig } = await import('./api.config.js');
  const boot = loadConfig(ApiConfig);
  // With a client CA the handshake asks for a certificate but lets one that fails verification through:
  // the authenticator then refuses it, unless a bearer token names the caller, as kube-apiserver does.
  const clientCa = boot.API_CLIENT_CA_FILE ? { ca: readFileSync(boot.API_CLIENT_CA_FILE), requestCert: true, rejectUnauthorized: false } : {};
  const httpsOptions =
    boot.API_TLS_CERT_FILE && boot.API_TLS_PRIVATE_KEY_FILE
      ? { cert: readFileSync(boot.API_TLS_CERT_FILE), key: readFileSync(boot.API_TLS_PRIVATE_KEY_FILE), ...clientCa }
      : undefined;
  const app = await NestFactory.create<NestExpressApplication>(ApiModule, {
    logger,
    bodyParser: false,
    // The body as sent stays beside the parsed one: JSON.parse keeps the last of two equal keys, strict decoding must see both.
    rawBody: true,
    ...(httpsOptions ? { httpsOptions } : {}),
  });
  // kube-apiserver sends neither: an ETag cost every answer a hash of its body (the OpenAPI route sets its own).
  app.set('etag', false);
  app.disable('x-powered-by');
  app.use(requestMetrics);
  // Authentication and authorization come before every route, watch and upgrade, and before a body is read.
  const auth = app.get(AuthMiddleware);
  app.use(auth.handle);
  auth.guardUpgrades(app.getHttpServer());
  keepIdleConnections(app.getHttpServer());
  // kubectl sends application/json; a manifest is small, so 3 MiB (etcd's object limit) is plenty.
  app.useBodyParser('json', { limit: '3mb', type: isJsonBody });
  // kubectl's typed client (create namespace) posts Kubernetes protobuf; the namespaces route reads it.
  app.useBodyParser('raw', { limit: '3mb', type: 'application/vnd.kubernetes.protobuf' });
  // Server-side apply sends its configuration as YAML (kubectl: JSON, which YAML includes); the route parses it.
  app.useBodyParser('text', { limit: '3mb', type: 'application/apply-patch+yaml' });
  // Upgrades (exec, attach, port-forward) go through the same middleware, guards and routes as any request.
  routeUpgrades(app.getHttpServer(), app.getHttpAdapter().getInstance());
  app.enableShutdownHooks();
  const config = app.get<{ API_PORT: number; API_ADDRESS: string; API_HTTP_PORT?: number }>(API_CONFIG);
  // The stream handlers beside the HTTP server; init() returns once the projections have caught up.
  app.connectMicroservice({ strategy: app.get(JetStreamServer) });
  await app.init();
  await app.startAllMicroservices();
  await app.listen(config.API_PORT, config.API_ADDRESS);
  logger.log(`API serving on ${await app.getUrl()}`, 'Bootstrap');
  if (httpsOptions && config.API_HTTP_PORT !== undefined) {
    const plain: Server = createServer(app.getHttpAdapter().getInstance());
    keepIdleConnections(plain);
    auth.guardUpgrades(plain);
    routeUpgrades(plain, app.getHttpAdapter().getInstance());
    app.getHttpServer().once('close', () => {
      plain.closeAllConnections();
      plain.close();
    });
    await new Promise<void>((resolve) => plain.listen(config.API_HTTP_PORT, config.API_ADDRESS, resolve));
    logger.log(`API serving plain HTTP on http://${config.API_ADDRESS}:${(plain.address() as AddressInfo).port}`, 'Bootstrap');
  }
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
