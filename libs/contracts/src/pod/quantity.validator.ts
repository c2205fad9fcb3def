import { registerDecorator, type ValidationArguments, type ValidationOptions } from 'class-validator';

/** A Kubernetes resource quantity: a decimal number with an optional SI, binary or exponent suffix. */
export const QUANTITY = /^[+]?(\d+(\.\d*)?|\.\d+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?\d+)?$/;

/** The resource names jetlet understands in requests and limits. */
export const RESOURCE_NAMES = ['cpu', 'memory'] as const;

/** Validates `{cpu?: quantity, memory?: quantity}`, naming the bad key in the message. */
export function IsQuantityMap(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isQuantityMap',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate(value: unknown): boolean {
          if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
          return Object.entries(value).every(
            ([k, v]) => (RESOURCE_NAMES as readonly string[]).includes(k) && (typeof v === 'string' ? QUANTITY.test(v) : typeof v === 'number' && v >= 0),
          );
        },
        defaultMessage(args: ValidationArguments): string {
          return `${args.property} must map cpu and memory to quantities such as "250m" or "64Mi"; got ${JSON.stringify(args.value)}`;
        },
      },
    });
  };
}
