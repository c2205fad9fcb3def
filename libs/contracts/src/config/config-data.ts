import { ValidateBy, type ValidationOptions } from '../class-validator.js';

/** Kubernetes' limit on the data of one ConfigMap or Secret, in bytes (`MaxSecretSize`, and the ConfigMap check). */
export const CONFIG_DATA_MAX_BYTES = 1024 * 1024;

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Problems of a ConfigMap or Secret key, as apimachinery's `IsConfigMapKey`. */
export function configKeyErrors(key: string): string[] {
  const errors: string[] = [];
  if (key.length > 253) errors.push('must be no more than 253 characters');
  if (!CONFIG_KEY.test(key))
    errors.push("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name', or 'KEY_NAME', or 'key-name')");
  if (key === '.') errors.push("must not be '.'");
  else if (key === '..') errors.push("must not be '..'");
  else if (key.startsWith('..')) errors.push("must not start with '..'");
  return errors;
}

/** True for standard base64 with padding, as Go's `base64.StdEncoding` decodes it. */
export const isBase64 = (value: string): boolean => BASE64.test(value);

const show = (value: string): string => JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}...` : value);

/**
 * Problems of a data map: valid keys, string values (base64 when `base64`). The messages name
 * keys, never values, so a Secret's value cannot reach a log through a validation error.
 */
export function configDataErrors(value: unknown, base64: boolean): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return ['Invalid value: must be an object of keys to string values'];
  const errors: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    errors.push(...configKeyErrors(k).map((e) => `Invalid value: key ${show(k)}: ${e}`));
    if (typeof v !== 'string') errors.push(`Invalid value: the value of ${show(k)} must be a string`);
    else if (base64 && !isBase64(v)) errors.push(`Invalid value: the value of ${show(k)} must be base64 encoded`);
  }
  return errors;
}

const dataDecorator = (name: string, base64: boolean, options?: ValidationOptions): PropertyDecorator =>
  ValidateBy(
    {
      name,
      validator: {
        validate: (value: unknown) => configDataErrors(value, base64).length === 0,
        defaultMessage: (args) => configDataErrors(args?.value, base64).join('; '),
      },
    },
    options,
  );

/** A ConfigMap's `data` or a Secret's `stringData`: config keys to strings. */
export const IsConfigData = (options?: ValidationOptions): PropertyDecorator => dataDecorator('isConfigData', false, options);
/** A ConfigMap's `binaryData` or a Secret's `data`: config keys to base64 strings. */
export const IsBase64ConfigData = (options?: ValidationOptions): PropertyDecorator => dataDecorator('isBase64ConfigData', true, options);
