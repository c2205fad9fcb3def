import type { DynamicModule, INestApplicationContext, Provider, Type } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { STATIC_CONTEXT } from '@nestjs/core/injector/constants.js';
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
