import { Inject, Injectable, Module, type DynamicModule, type OnApplicationBootstrap, type OnApplicationShutdown, type OnModuleDestroy } from '@nestjs/common';
import { Bus, type BusOptions } from './bus.js';
import { JetStreamClient } from './transport/jetstream.client.js';
import { JetStreamServer, type JetStreamServerOptions } from './transport/jetstream.server.js';

/** Injection token for the connected Bus. */
export const BUS = Symbol('BUS');
const BUS_OPTIONS = Symbol('BUS_OPTIONS');

/** Drains the connection when the application shuts down, after consumers stopped in onModuleDestroy. */
@Injectable()
class BusLifecycle implements OnApplicationBootstrap, OnModuleDestroy, OnApplicationShutdown {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    private readonly server: JetStreamServer,
  ) {}

  /**
   * Handlers connected with `app.connectMicroservice({ strategy })` before `init()` get their
   * messages from here on: this module's bootstrap runs before the apps' own, so those see
   * projections that have caught up with the streams, unless the server was told not to hold
   * them (`catchUpBeforeBootstrap: false`); the hooks then wait for `caughtUp` where they need it.
   */
  async onApplicationBootstrap(): Promise<void> {
    if (this.server.getHandlers().size === 0) return;
    const started = this.server.start();
    if (this.server.catchesUpBeforeBootstrap) await started;
    // Else a failure reaches those waiting on `caughtUp`, and the start of the microservice.
    else started.catch(() => undefined);
  }

  /** Handlers stop getting messages before the services behind them stop. */
  async onModuleDestroy(): Promise<void> {
    await this.server.close();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.bus.close();
  }
}

@Module({})
export class BusModule {
  /**
   * Connects (with retry) and ensures the streams before the application starts. Provides
   * the Bus, the transport strategy (`app.connectMicroservice({ strategy: app.get(JetStreamServer) })`)
   * and its client; `server` says which node THIS_NODE stands for and what config deliver policies see.
   */
  static forRoot(options: () => BusOptions, server: () => JetStreamServerOptions = () => ({})): DynamicModule {
    return {
      module: BusModule,
      global: true,
      providers: [
        { provide: BUS_OPTIONS, useFactory: options },
        {
          provide: BUS,
          inject: [BUS_OPTIONS],
          useFactory: async (opts: BusOptions): Promise<Bus> => {
            const bus = await Bus.connect(opts);
            if (bus.ensuresStreams) await bus.ensureStreams();
            return bus;
          },
        },
        { provide: JetStreamServer, inject: [BUS], useFactory: (bus: Bus) => new JetStreamServer(bus, server()) },
        { provide: JetStreamClient, inject: [BUS], useFactory: (bus: Bus) => new JetStreamClient(bus) },
        BusLifecycle,
      ],
      exports: [BUS, JetStreamServer, JetStreamClient],
    };
  }
}
