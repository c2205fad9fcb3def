import { ValidateBy } from '../class-validator.js';

/**
 * Accepts only `{}`: a field clients fill in with an empty default (securityContext) that
 * jetlet cannot honour once it holds settings.
 */
export function IsEmptyObject(): PropertyDecorator {
  return ValidateBy({
    name: 'isEmptyObject',
    validator: {
      validate: (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0,
      defaultMessage: (args) => `Unsupported value: ${JSON.stringify(args?.value)}: jetlet supports only an empty ${args?.property ?? 'object'}`,
    },
  });
}
