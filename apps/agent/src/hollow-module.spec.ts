import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Global, Injectable, Module, type DynamicModule, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { LazyModuleLoader, ModulesContainer, NestFactory } from '@nestjs/core';
import { loadConfig } from '#contracts';
import { AgentConfig } from './agent.config.js';
import { AgentModule } from './agent.module.js';
import { packModules, releaseBootstrapState } from './hollow-module.js';

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
