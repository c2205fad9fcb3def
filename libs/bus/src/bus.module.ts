import { Inject, Injectable, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { Bus, type BusOptions } from './bus.js';

/** Injection token for the connected Bus. */
export const BUS = Symbol('BUS');
const BUS_OPTIONS = Symbol('BUS_OPTIONS');

/** Drains the connection when the application shuts down, after consumers stopped in onModuleDestroy. */
@Injectable()
class BusLifecycle implements OnApplicationShutdown {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  async onApplicationShutdown(): Promise<void> {
    await this.bus.close();
  }
}

@Module({})
export class BusModule {
  /** Connects (with retry) and ensures the streams before the application starts. */
  static forRoot(options: () => BusOptions): DynamicModule {
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
            await bus.ensureStreams();
            return bus;
          },
        },
        BusLifecycle,
      ],
      exports: [BUS],
    };
  }
}
