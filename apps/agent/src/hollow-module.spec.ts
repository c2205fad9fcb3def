import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  Controller,
  Global,
  Injectable,
  Module,
  type BeforeApplicationShutdown,
  type DynamicModule,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleDestroy,
} from '@nestjs/common';
import { LazyModuleLoader, ModulesContainer, NestFactory } from '@nestjs/core';
import { EventPattern, MessagePattern, Payload, Server, type CustomTransportStrategy, type MicroserviceOptions } from '@nestjs/microservices';
import { loadConfig } from '#contracts';
import { AgentConfig } from './agent.config.js';
import { AgentModule } from './agent.module.js';
import { packModules, releaseBootstrapState, releaseContainer } from './hollow-module.js';

const calls: string[] = [];

@Injectable()
class Bus implements OnApplicationBootstrap, OnModuleDestroy {
  onApplicationBootstrap(): void {
    calls.push('bus up');
  }
  onModuleDestroy(): void {
    calls.push('bus down');
  }
}

@Global()
@Module({ providers: [Bus], exports: [Bus] })
class BusModule {}

@Injectable()
class Store implements OnApplicationBootstrap {
  constructor(readonly bus: Bus) {}
  async onApplicationBootstrap(): Promise<void> {
    await new Promise((r) => setImmediate(r));
    calls.push('store up');
  }
}

@Module({ providers: [Store], exports: [Store] })
class StoreModule {}

@Injectable()
class Loop implements OnApplicationBootstrap {
  constructor(readonly store: Store) {}
  onApplicationBootstrap(): void {
    calls.push('loop up');
  }
}

@Module({ imports: [StoreModule], providers: [Loop] })
class LoopModule {}

@Module({})
class Root {}

const root = (): DynamicModule => ({ module: Root, imports: [{ module: BusModule, global: true }, StoreModule, LoopModule] });

describe('packModules', () => {
  it('makes every provider once, in one module beside the global ones, with hooks in dependency order', async () => {
    calls.length = 0;
    const sut = packModules(root());
    assert.deepEqual(
      sut.imports?.map((m) => (m as DynamicModule).module),
      [BusModule],
    );
    assert.deepEqual(sut.providers, [Store, Loop]);
    const app = await NestFactory.createApplicationContext(sut, { logger: false });
    assert.equal(app.get(Loop).store, app.get(Store));
    assert.equal(app.get(Store).bus, app.get(Bus));
    await app.close();
    assert.deepEqual(calls, ['bus up', 'store up', 'loop up', 'bus down']);
  });

  it('refuses a module class with hooks of its own', () => {
    @Module({})
    class Busy {
      onModuleInit(): void {}
    }
    assert.throws(() => packModules({ module: Root, imports: [Busy] }), /Busy has a body of its own/);
  });

  it('refuses two modules that provide one token differently', () => {
    @Module({ providers: [{ provide: 'x', useValue: 1 }] })
    class A {}
    @Module({ providers: [{ provide: 'x', useValue: 2 }] })
    class B {}
    assert.throws(() => packModules({ module: Root, imports: [A, B] }), /x is provided twice/);
  });

  it("packs the agent's own modules, and without HTTP routes keeps exactly the controllers with message handlers", () => {
    const config = loadConfig(AgentConfig, { NODE_NAME: 'packed-0', RUNTIME: 'fake' });
    const all = packModules(AgentModule.forConfig(config));
    assert.equal(all.imports?.length, 2, 'the bus and the agent core stay global modules');
    assert.ok((all.providers?.length ?? 0) > 20);
    const sut = packModules(AgentModule.forConfig(config), { httpRoutes: false });
    assert.deepEqual(sut.providers, all.providers);
    const names = (m: DynamicModule): string[] => (m.controllers ?? []).map((c) => c.name).sort();
    assert.deepEqual(names(sut), ['AssignmentsController', 'LogsController', 'MirrorControlController', 'StatsRequestsController', 'StreamsController']);
    assert.deepEqual(
      names(all).filter((n) => !names(sut).includes(n)),
      ['AgentHttpController', 'StatsController'],
    );
  });
});

describe('releaseBootstrapState', () => {
  const signals = (app: { get: (t: typeof ModulesContainer, o: { strict: false }) => ModulesContainer }): number =>
    [...app.get(ModulesContainer, { strict: false }).values()].flatMap((m) => [...m.providers.values()]).filter((w) => w.settlementSignal !== undefined).length;

  it("drops each made provider's settlement signal; the application still resolves, loads modules and shuts down in order", async () => {
    calls.length = 0;
    const app = await NestFactory.createApplicationContext(packModules(root()), { logger: false });
    await app.init();
    assert.ok(signals(app) > 0);
    assert.ok(releaseBootstrapState(app) >= 3);
    assert.equal(signals(app), 0);
    // A lookup after the release builds its table anew and finds the same instances.
    assert.equal(app.get(Loop).store, app.get(Store));
    // A provider made after the release (a module loaded later) may still inject one made before it.
    @Injectable()
    class Late {
      constructor(readonly bus: Bus) {}
    }
    @Module({ providers: [Late] })
    class LateModule {}
    const late = await app.get(LazyModuleLoader).load(() => LateModule);
    assert.equal(late.get(Late).bus, app.get(Bus));
    await app.close();
    assert.deepEqual(calls, ['bus up', 'store up', 'loop up', 'bus down']);
  });
});

describe('releaseContainer', () => {
  const log: string[] = [];

  /** A transport that only keeps its handlers, so a test can call them as a message would. */
  class Transport extends Server implements CustomTransportStrategy {
    listen(callback: () => void): void {
      callback();
    }
    close(): void {
      log.push('transport closed');
    }
    on(): never {
      throw new Error('no events');
    }
    unwrap<T>(): T {
      return this as unknown as T;
    }
  }

  @Injectable()
  class Connection implements OnModuleDestroy, BeforeApplicationShutdown, OnApplicationShutdown {
    onModuleDestroy(): void {
      log.push('connection destroy');
    }
    beforeApplicationShutdown(signal?: string): void {
      log.push(`connection before shutdown ${signal}`);
    }
    onApplicationShutdown(): void {
      log.push('connection shutdown');
    }
  }

  @Global()
  @Module({ providers: [Connection], exports: [Connection] })
  class ConnectionModule {}

  @Injectable()
  class Counter implements OnModuleDestroy {
    count = 0;
    constructor(readonly connection: Connection) {}
    async onModuleDestroy(): Promise<void> {
      await new Promise((r) => setImmediate(r));
      log.push('counter destroy');
    }
  }

  @Injectable()
  class Reporter implements OnModuleDestroy, OnApplicationShutdown {
    constructor(readonly counter: Counter) {}
    onModuleDestroy(): void {
      log.push('reporter destroy');
    }
    onApplicationShutdown(): void {
      throw new Error('a failing hook is logged, not thrown');
    }
  }

  @Controller()
  class CountController {
    constructor(readonly counter: Counter) {}
    @EventPattern('count')
    count(@Payload() by: number): void {
      this.counter.count += by;
    }
    @MessagePattern('total')
    total(): number {
      return this.counter.count;
    }
  }

  @Module({ providers: [Counter, Reporter], controllers: [CountController] })
  class CountModule {}

  const start = async (): Promise<{ app: Awaited<ReturnType<typeof NestFactory.createMicroservice>>; transport: Transport }> => {
    const transport = new Transport();
    const app = await NestFactory.createMicroservice<MicroserviceOptions>(
      packModules({ module: Root, imports: [{ module: ConnectionModule, global: true }, CountModule] }),
      {
        strategy: transport,
        logger: false,
      },
    );
    await app.listen();
    return { app, transport };
  };

  it('closes as Nest would: the transport, then each shutdown hook by module and dependency level', async () => {
    const nest = await start();
    log.length = 0;
    await nest.app.close();
    const expected = [...log];
    assert.deepEqual(expected.slice(0, 2), ['transport closed', 'reporter destroy'], 'the fixture orders hooks as this test expects');

    const released = await start();
    log.length = 0;
    const sut = releaseContainer(released.app);
    await sut.close();
    assert.deepEqual(log, expected);
    await sut.close();
    assert.deepEqual(log, expected, 'a second close does nothing more');
  });

  it("empties Nest's container; the handlers still run on the providers they were made with, which Nest then lets go of", async () => {
    // As a hollow process does, only the transport and the ReleasedAgent are kept, not the application.
    const { transport, sut, container, gone } = await (async () => {
      const { app, transport } = await start();
      const container = app.get(ModulesContainer, { strict: false });
      const counter = [...container.values()].flatMap((m) => [...m.providers.values()]).find((w) => w.token === Counter);
      assert.ok(counter, 'the fixture has a Counter wrapper');
      return { transport, sut: releaseContainer(app), container, gone: new WeakRef(counter) };
    })();
    assert.equal(container.size, 0);

    await transport.getHandlerByPattern('count')?.(2);
    await transport.getHandlerByPattern('count')?.(3);
    const total: unknown = await transport.getHandlerByPattern('total')?.(undefined);
    assert.equal(await (total as Promise<unknown>), 5);

    // Nothing the agent keeps reaches the wrappers Nest made its providers with.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    await new Promise((r) => setImmediate(r));
    gc();
    assert.equal(gone.deref(), undefined, "a provider's InstanceWrapper outlives the release: Nest keeps it somewhere new");
    await sut.close();
  });
});
