import { registerDecorator, type ValidationArguments, type ValidationOptions } from '../class-validator.js';
import { DOCKER_MIN_CPU_MILLIS, DOCKER_MIN_MEMORY_BYTES } from '../limits.js';
import { cpuMillis, memoryBytes } from './quantity.js';

/** A Kubernetes resource quantity: a decimal number with an optional SI, binary or exponent suffix. */
export const QUANTITY = /^[+]?(\d+(\.\d*)?|\.\d+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?\d+)?$/;

/**
 * The resource names jetlet understands in requests and limits. `ephemeral-storage` is bytes
 * of the node's disk; its limit is enforced by the agent's eviction manager, not by Docker.
 */
export const RESOURCE_NAMES = ['cpu', 'memory', 'ephemeral-storage'] as const;
type ResourceName = (typeof RESOURCE_NAMES)[number];

/** The amount in the unit jetlet applies it in (millicores, bytes), or undefined for a value that is not a usable quantity. */
function amount(resource: ResourceName, value: unknown): number | undefined {
  if (typeof value === 'string' ? !QUANTITY.test(value) : typeof value !== 'number' || !(value >= 0)) return undefined;
  const n = resource === 'cpu' ? cpuMillis(value as string | number) : memoryBytes(value as string | number);
  // Whole numbers only past this point: the agent hands them to Docker as int64 (nano-CPUs, bytes).
  return Number.isFinite(n) && n * (resource === 'cpu' ? 1e6 : 1) <= Number.MAX_SAFE_INTEGER ? n : undefined;
}

/** Problems of one requests or limits map. */
function quantityMapErrors(value: unknown, kind: 'requests' | 'limits', other: unknown): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return ['must map cpu, memory and ephemeral-storage to quantities such as "250m" or "64Mi"'];
  const errors: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    if (!(RESOURCE_NAMES as readonly string[]).includes(k)) {
      errors.push(`${k}: Unsupported value: supported resources: "cpu", "memory", "ephemeral-storage"`);
      continue;
    }
    const resource = k as ResourceName;
    const n = amount(resource, v);
    if (n === undefined) {
      errors.push(`${k}: ${JSON.stringify(v) ?? String(v)} must be a quantity such as "250m" or "64Mi", at most ${resource === 'cpu' ? '9007199' : '8Pi'}`);
      continue;
    }
    if (kind === 'limits' && resource === 'memory' && n > 0 && n < DOCKER_MIN_MEMORY_BYTES) {
      errors.push(
        `memory: ${JSON.stringify(v)} is below Docker's minimum memory limit is 6Mi (${DOCKER_MIN_MEMORY_BYTES} bytes); a container with less can never start`,
      );
    }
    if (kind === 'limits' && resource === 'cpu' && n > 0 && n < DOCKER_MIN_CPU_MILLIS) {
      errors.push(`cpu: ${JSON.stringify(v)} is below Docker's minimum CPU limit is 10m (0.01 CPU); a container with less can never start`);
    }
    const limit = kind === 'requests' && typeof other === 'object' && other !== null ? (other as Record<string, unknown>)[k] : undefined;
    const limitAmount = limit === undefined ? undefined : amount(resource, limit);
    if (limitAmount !== undefined && n > limitAmount)
      errors.push(`${k}: ${JSON.stringify(v)} must be less than or equal to ${k} limit of ${JSON.stringify(limit)}`);
  }
  return errors;
}

/** Validates `{cpu?, memory?, ephemeral-storage?: quantity}` of requests or limits, naming the bad key in the message. */
export function IsQuantityMap(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    const kind = propertyName === 'requests' ? 'requests' : 'limits';
    const errorsOf = (args: ValidationArguments): string[] =>
      quantityMapErrors(args.value, kind, kind === 'requests' ? (args.object as { limits?: unknown }).limits : undefined);
    registerDecorator({
      name: 'isQuantityMap',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate: (_value: unknown, args?: ValidationArguments) => (args ? errorsOf(args).length === 0 : false),
        defaultMessage: (args?: ValidationArguments) => (args ? errorsOf(args).join('; ') : 'invalid quantities'),
      },
    });
  };
}
