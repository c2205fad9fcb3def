import { Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import { BusModule, busTls } from '#bus';
import { loadConfig } from '#contracts';
import { MetricsController } from '#observability';
import { API_CONFIG } from './api.constants.js';
import { ApiConfig } from './api.config.js';
import { ConfigObjectsController } from './config/config-objects.controller.js';
import { ConfigObjectsService } from './config/config-objects.service.js';
import { AuditService } from './auth/audit.service.js';
import { AuthMiddleware } from './auth/auth.middleware.js';
import { AuthService } from './auth/auth.service.js';
import { SelfSubjectAccessReviewController } from './auth/self-subject-access-review.controller.js';
import { DiscoveryController } from './discovery/discovery.controller.js';
import { FieldValidationInterceptor } from './errors/field-validation.interceptor.js';
import { KubeStatusFilter } from './errors/kube-status.filter.js';
import { EventsController } from './events/events.controller.js';
import { LeasesController } from './leases/leases.controller.js';
import { HealthController } from './health/health.controller.js';
import { NamespacesController } from './namespaces/namespaces.controller.js';
import { NamespacesService } from './namespaces/namespaces.service.js';
import { NodesController } from './nodes/nodes.controller.js';
import { OpenApiController } from './openapi/openapi.controller.js';
import { PodsController } from './pods/pods.controller.js';
import { PodSubresourcesController } from './pods/pod-subresources.controller.js';
import { PodsService } from './pods/pods.service.js';
import { PodLogsController } from './pods/pod-logs.controller.js';
import { PodLogsService } from './pods/pod-logs.service.js';
import { ResourceMetricsController } from './metrics-api/resource-metrics.controller.js';
import { ResourceMetricsService } from './metrics-api/resource-metrics.service.js';
import { PodStreamsController } from './streaming/pod-streams.controller.js';
import { PodStreamsService } from './streaming/pod-streams.service.js';
import { PagingInterceptor } from './options/paging.interceptor.js';
import { PrintingInterceptor } from './printing/printing.interceptor.js';
import { ProjectionController } from './projection/projection.controller.js';
import { ProjectionService } from './projection/projection.service.js';
import { StaleReadInterceptor } from './projection/stale-read.interceptor.js';
import { WatchMiddleware } from './watch/watch.middleware.js';
import { WatchService } from './watch/watch.service.js';
import { KubeInputGuard } from './validation/kube-input.guard.js';

const config = loadConfig(ApiConfig);

@Module({
  imports: [
    BusModule.forRoot(() => ({
      servers: config.NATS_URL,
      streamReplicas: config.STREAM_REPLICAS,
      name: 'jetlet-api',
      source: { component: 'api' },
      credentials: { identity: { kind: 'api' }, seedFile: config.NATS_NKEY_SEED_FILE },
      tls: busTls(config),
      publishTimeoutMs: config.BUS_TIMEOUT_SECONDS * 1000,
      // It reads back every write it makes (read-your-writes; its own bindings).
      reuseVerified: 4096,
    })),
  ],
  controllers: [
    MetricsController,
    DiscoveryController,
    PodsController,
    PodSubresourcesController,
    PodLogsController,
    PodStreamsController,
    ResourceMetricsController,
    NodesController,
    EventsController,
    LeasesController,
    HealthController,
    OpenApiController,
    NamespacesController,
    ConfigObjectsController,
    ProjectionController,
    SelfSubjectAccessReviewController,
  ],
  providers: [
    { provide: API_CONFIG, useValue: config },
    { provide: APP_FILTER, useClass: KubeStatusFilter },
    { provide: APP_GUARD, useClass: KubeInputGuard },
    { provide: APP_INTERCEPTOR, useClass: StaleReadInterceptor },
    { provide: APP_INTERCEPTOR, useClass: FieldValidationInterceptor },
    // Paging runs inside it: a page is cut from the objects before they become a Table.
    { provide: APP_INTERCEPTOR, useClass: PrintingInterceptor },
    PagingInterceptor,
    WatchService,
    ProjectionService,
    PodsService,
    NamespacesService,
    ConfigObjectsService,
    PodLogsService,
    PodStreamsService,
    ResourceMetricsService,
    AuthService,
    AuditService,
    AuthMiddleware,
  ],
})
export class ApiModule implements NestModule {
  /** Watches (`?watch=true`, `/api/v1/watch/...`) are streams, served before the list handlers. */
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(WatchMiddleware).forRoutes({ path: 'api/v1/{*rest}', method: RequestMethod.GET });
  }
}
