import {
  Logger,
  type DynamicModule,
  type INestApplicationContext,
  type INestMicroservice,
  type InjectionToken,
  type Provider,
  type Type,
} from '@nestjs/common';
import { INQUIRER, ModulesContainer, REQUEST } from '@nestjs/core';
import { getInstancesGroupedByHierarchyLevel } from '@nestjs/core/hooks/utils/get-instances-grouped-by-hierarchy-level.js';
import { getSortedHierarchyLevels } from '@nestjs/core/hooks/utils/get-sorted-hierarchy-levels.js';
import { STATIC_CONTEXT } from '@nestjs/core/injector/constants.js';
import { INSTANCE_METADATA_SYMBOL, type InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { PATTERN_METADATA } from '@nestjs/microservices/constants.js';

type ModuleLike = Type | DynamicModule;

const isDynamic = (m: ModuleLike): m is DynamicModule => typeof m === 'object' && 'module' in m;
const metadata = <T>(key: string, target: Type): T[] => (Reflect.getMetadata(key, target) as T[] | undefined) ?? [];
const tokenOf = (p: Provider): unknown => (typeof p === 'function' ? p : p.provide);

/** Whether a controller has a message handler (`@EventPattern`, `@MessagePattern`), as opposed to HTTP routes only. */
function handlesMessages(controller: Type): boolean {
  const proto = controller.prototype as Record<string, unknown>;
  return Object.getOwnPropertyNames(proto).some((key) => key !== 'constructor' && Reflect.getMetadata(PATTERN_METADATA, proto[key] as object) !== undefined);
}

/**
 * The same agent as `root`, packed for a process of hundreds: its global modules (the bus,
 * the agent's core) stay as they are, and every other module's providers and controllers
 * move into one module. Nest keeps a container per module (the module, its ModuleRef, maps
 * of its providers, imports and exports, a wrapper per entry): packed, a hollow agent carries
 * one instead of one per folder. Every provider is the same and is made once, as before.
 *
 * Lifecycle hooks keep their order: global modules' hooks still run first (the bus's
 * consumers open before the agent's bootstrap, and stop before its parts do), and within one
 * module Nest calls hooks by dependency level, so a provider's hook still runs after those of
 * what it injects. Only module classes with no body of their own may be packed: a module class
 * with a constructor or hooks throws here.
 *
 * With `httpRoutes: false` (an agent that never listens), controllers that serve only HTTP
 * routes are left out, so no router is built for them; controllers with message handlers stay.
 */
export function packModules(root: DynamicModule, options: { httpRoutes?: boolean } = {}): DynamicModule {
  const globals: DynamicModule[] = [];
  const providers = new Map<unknown, Provider>();
  const controllers = new Set<Type>();
  const seen = new Set<unknown>();
  const visit = (m: ModuleLike): void => {
    const type = isDynamic(m) ? m.module : m;
    if (seen.has(m) || seen.has(type)) return;
    seen.add(m);
    seen.add(type);
    if (isDynamic(m) && m.global) {
      globals.push(m);
      return;
    }
    if (type !== root.module && (type.length > 0 || Object.getOwnPropertyNames(type.prototype).length > 1))
      throw new Error(`${type.name} has a body of its own and cannot be packed`);
    const dynamic = isDynamic(m) ? m : undefined;
    for (const i of [...metadata<ModuleLike>('imports', type), ...((dynamic?.imports ?? []) as ModuleLike[])]) visit(i);
    for (const p of [...metadata<Provider>('providers', type), ...(dynamic?.providers ?? [])]) {
      const token = tokenOf(p);
      if (providers.has(token) && providers.get(token) !== p) throw new Error(`${String(token)} is provided twice; packing would merge them`);
      providers.set(token, p);
    }
    for (const c of [...metadata<Type>('controllers', type), ...(dynamic?.controllers ?? [])])
      if (options.httpRoutes !== false || handlesMessages(c)) controllers.add(c);
  };
  visit(root);
  return { module: root.module, imports: globals, providers: [...providers.values()], controllers: [...controllers] };
}

/**
 * Lets go of what Nest keeps, once an application runs, only for resolving providers: each
 * provider's settlement signal (with its promise, its map of the providers it waited on and
 * its resolver, there to detect a cycle while the provider was being made) and the lookup
 * table `get` built (`inject` of a microservice's strategy goes through it). A hollow agent's
 * providers are all static and made by then, so nothing reads them again; a later `get` builds
 * its table anew. About a tenth of a hollow agent's heap, kept for the process's lifetime by
 * every agent. Returns how many signals were released.
 */
export function releaseBootstrapState(app: INestApplicationContext): number {
  let released = 0;
  for (const module of app.get(ModulesContainer, { strict: false }).values())
    for (const wrappers of [module.providers, module.controllers, module.injectables, module.middlewares])
      for (const wrapper of wrappers.values()) {
        // Only static providers: a request-scoped or transient one is made again later and needs its signals.
        if (!wrapper.isDependencyTreeStatic() || wrapper.isTransient) continue;
        const resolved = wrapper.getInstanceByContextId(STATIC_CONTEXT);
        if (!resolved.isResolved) continue;
        if (wrapper.settlementSignal || resolved.settlementSignal) released++;
        // Nest leaves a made instance marked pending; unmarked, a later load of it makes a new, settled signal instead of awaiting the dropped one.
        resolved.isPending = false;
        resolved.donePromise = undefined;
        resolved.settlementSignal = undefined;
        wrapper.settlementSignal = undefined;
      }
  const links = app as unknown as { _instanceLinksHost?: unknown };
  if ('_instanceLinksHost' in links) links._instanceLinksHost = undefined;
  return released;
}

/** The shutdown hooks Nest calls at close, in its order. */
const SHUTDOWN_HOOKS = ['onModuleDestroy', 'beforeApplicationShutdown', 'onApplicationShutdown'] as const;
type ShutdownHook = (typeof SHUTDOWN_HOOKS)[number];
type HookHost = Partial<Record<ShutdownHook, () => unknown>>;

/** What Nest keeps of a module, as its hooks read it (`@nestjs/core/hooks`). */
interface HookedModule {
  getNonAliasProviders(): Array<[InjectionToken, InstanceWrapper]>;
  controllers: Map<InjectionToken, InstanceWrapper>;
  injectables: Map<InjectionToken, InstanceWrapper>;
  middlewares: Map<InjectionToken, InstanceWrapper>;
}

/** What `releaseContainer` empties of a Nest module: its maps and sets of imports, wrappers and exports. */
const MODULE_COLLECTIONS = ['_imports', '_providers', '_injectables', '_middlewares', '_controllers', '_entryProviderKeys', '_exports'] as const;

/** The parts of a Nest microservice `releaseContainer` reads and empties. */
interface MicroserviceInternals {
  serverInstance?: { close(): unknown };
  getModulesToTriggerHooksOn?: () => HookedModule[];
  container?: {
    getModules(): Map<string, HookedModule & Partial<Record<(typeof MODULE_COLLECTIONS)[number], unknown>>>;
    globalModules?: unknown;
    dynamicModulesMetadata?: unknown;
    serializedGraph?: { nodes?: unknown; edges?: unknown; entrypoints?: unknown };
  };
  microservicesModule?: { listenersController?: { metadataExplorer?: { metadataScanner?: { cachedScannedPrototypes?: unknown } } } };
}

/** Empties a Map or Set of Nest's; anything else means Nest changed under releaseContainer, which then stops. */
function empty(collection: unknown, what: string): void {
  if (!(collection instanceof Map || collection instanceof Set)) throw new Error(`Nest's ${what} is not a Map or Set; its container cannot be released`);
  collection.clear();
}

/** Nest's own request-scoped and transient providers, in every application and made only when injected (never in a hollow agent). */
const NEST_SCOPED_TOKENS = new Set<InjectionToken>([REQUEST, INQUIRER]);

const hasShutdownHook = (instance: unknown): instance is HookHost =>
  typeof instance === 'object' && instance !== null && SHUTDOWN_HOOKS.some((hook) => typeof (instance as HookHost)[hook] === 'function');

/**
 * A running agent without Nest's container: its transport and, in the order Nest's `close()`
 * would call them, the instances with a shutdown hook. Closing it does what closing the
 * microservice did: the transport closes, then every `onModuleDestroy`, every
 * `beforeApplicationShutdown`, every `onApplicationShutdown`, each by module (farthest from
 * the root first) and within one by dependency level, a level's hooks at once, a failing hook
 * logged as Nest logs it.
 */
export class ReleasedAgent {
  private closing?: Promise<void>;

  constructor(
    private readonly server: { close(): unknown },
    /** Groups of instances whose hooks run together, in order. */
    private readonly groups: HookHost[][],
  ) {}

  /** As a Nest microservice's `close()`, which passes its hooks no signal. */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      await this.server.close();
      for (const hook of SHUTDOWN_HOOKS)
        for (const group of this.groups) {
          const results = await Promise.allSettled(group.filter((i) => typeof i[hook] === 'function').map(async (i) => i[hook]?.()));
          for (const r of results) if (r.status === 'rejected') Logger.error(r.reason, (r.reason as Error | undefined)?.stack);
        }
    })());
  }
}

/**
 * Lets go of Nest's whole container once an agent runs: the modules, their ModuleRef classes,
 * the wrapper and its per-context maps of every provider, the injector, the scanners and the
 * graph Nest made while it built the agent (a third of a hollow agent's heap). What the agent
 * runs on is kept by what uses it (its consumers and subscriptions hold the handlers, the
 * handlers their controllers, timers their services); what `close()` needs, the transport
 * and the instances with shutdown hooks in Nest's order, is taken first into the returned
 * ReleasedAgent, which the caller keeps instead of the application. Only for a microservice
 * whose providers are all static and made (a hollow agent's): a request-scoped or transient
 * provider, which Nest makes again later, makes it throw. The microservice must not be used
 * after this but through the ReleasedAgent. (Nest's own REQUEST and INQUIRER, made only when
 * injected, are left out.)
 */
export function releaseContainer(app: INestMicroservice): ReleasedAgent {
  releaseBootstrapState(app);
  const internals = app as unknown as MicroserviceInternals;
  const server = internals.serverInstance;
  if (!server || typeof internals.getModulesToTriggerHooksOn !== 'function')
    throw new Error('this Nest microservice has no serverInstance or getModulesToTriggerHooksOn');
  const groups: HookHost[][] = [];
  // Nest's close() runs hooks over the modules farthest from the root first (reverse of getModulesToTriggerHooksOn).
  for (const module of [...internals.getModulesToTriggerHooksOn.call(app)].reverse()) {
    const providers = module.getNonAliasProviders();
    // As `callModuleDestroyHook`: the module class's own instance comes first and is called last.
    const moduleClassHost = providers.shift()?.[1];
    const wrappers = [module.controllers, module.injectables, module.middlewares, new Map(providers)];
    for (const wrappers_ of wrappers)
      for (const wrapper of wrappers_.values())
        if ((!wrapper.isDependencyTreeStatic() || wrapper.isTransient) && !NEST_SCOPED_TOKENS.has(wrapper.token))
          throw new Error(`${String(wrapper.name)} is not a static provider; its container cannot be released`);
    const grouped = getInstancesGroupedByHierarchyLevel(...wrappers);
    for (const level of getSortedHierarchyLevels(grouped, 'DESC')) {
      const group = (grouped.get(level) ?? []).filter(hasShutdownHook);
      if (group.length > 0) groups.push(group);
    }
    const own: unknown = moduleClassHost?.instance;
    if (moduleClassHost?.isDependencyTreeStatic() && hasShutdownHook(own)) groups.push([own]);
  }
  // The message handlers Nest made close over its ListenersController, which holds the
  // container, and over the module they came from: emptied, those hold no wrapper, module
  // or graph beyond the controllers' own. Nothing reads them once the handlers are made: a
  // static handler calls its controller through the pipes, guards and filters it was made with.
  const container = internals.container;
  if (!container || typeof container.getModules !== 'function') throw new Error('this Nest microservice has no container');
  const modules = container.getModules();
  for (const module of modules.values()) {
    // A wrapper's metadata lists the wrappers it was made from: a controller's kept wrapper would keep them all.
    for (const wrappers of [module.controllers, module.injectables, module.middlewares, new Map(module.getNonAliasProviders())])
      for (const wrapper of wrappers.values()) {
        if (!Object.hasOwn(wrapper, INSTANCE_METADATA_SYMBOL))
          throw new Error(`Nest's InstanceWrapper has no instance metadata; its container cannot be released`);
        (wrapper as unknown as Record<symbol, object>)[INSTANCE_METADATA_SYMBOL] = {};
      }
    for (const key of MODULE_COLLECTIONS) empty(module[key], `Module.${key}`);
  }
  empty(modules, 'ModulesContainer');
  empty(container.globalModules, 'NestContainer.globalModules');
  empty(container.dynamicModulesMetadata, 'NestContainer.dynamicModulesMetadata');
  const graph = container.serializedGraph;
  for (const key of ['nodes', 'edges', 'entrypoints'] as const) empty(graph?.[key], `SerializedGraph.${key}`);
  empty(
    internals.microservicesModule?.listenersController?.metadataExplorer?.metadataScanner?.cachedScannedPrototypes,
    'ListenersController.metadataExplorer.metadataScanner.cachedScannedPrototypes',
  );
  return new ReleasedAgent(server, groups);
}
