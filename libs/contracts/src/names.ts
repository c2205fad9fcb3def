import { posix } from 'node:path';
import { ValidateBy, type ValidationOptions } from './class-validator.js';

/**
 * Kubernetes' name and metadata syntax (apimachinery `validation.IsDNS1123Label`,
 * `IsDNS1123Subdomain`, `IsQualifiedName`, `IsValidLabelValue`, `ValidateAnnotations`),
 * with its messages. Every check returns the list of problems, empty when the value is fine.
 */

/** DNS-1123 label: namespaces, container and port names. */
export const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** DNS-1123 subdomain: pod and node names. */
export const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const DNS1123_LABEL_MAX = 63;
export const DNS1123_SUBDOMAIN_MAX = 253;

const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
export const LABEL_VALUE_MAX = 63;
/** Kubernetes' cap on the sum of every annotation's key and value, in bytes. */
export const ANNOTATIONS_MAX_BYTES = 256 * 1024;

const show = (value: string): string => JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}...` : value);

export function dns1123LabelErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > DNS1123_LABEL_MAX) errors.push(`must be no more than ${DNS1123_LABEL_MAX} characters`);
  if (!DNS1123_LABEL.test(value)) {
    errors.push(
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name', or '123-abc')",
    );
  }
  return errors;
}

export function dns1123SubdomainErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > DNS1123_SUBDOMAIN_MAX) errors.push(`must be no more than ${DNS1123_SUBDOMAIN_MAX} characters`);
  if (!DNS1123_SUBDOMAIN.test(value)) {
    errors.push(
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com')",
    );
  }
  return errors;
}

/** A label, annotation, node-selector or taint key: `[prefix/]name`, prefix a DNS subdomain. */
export function qualifiedNameErrors(key: string): string[] {
  const parts = key.split('/');
  if (parts.length > 2)
    return [
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  const [prefix, name] = parts.length === 2 ? parts : [undefined, parts[0]];
  const errors: string[] = [];
  if (prefix !== undefined) {
    if (prefix.length === 0) errors.push('prefix part must be non-empty');
    else errors.push(...dns1123SubdomainErrors(prefix).map((e) => `prefix part ${e}`));
  }
  if (!name) errors.push('name part must be non-empty');
  else {
    if (name.length > 63) errors.push('name part must be no more than 63 characters');
    if (!QUALIFIED_NAME_PART.test(name)) {
      errors.push(
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', or 'my.name')",
      );
    }
  }
  return errors;
}

export function labelValueErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > LABEL_VALUE_MAX) errors.push(`must be no more than ${LABEL_VALUE_MAX} characters`);
  if (!LABEL_VALUE.test(value)) {
    errors.push(
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
    );
  }
  return errors;
}

function entries(value: unknown): Array<[string, unknown]> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return Object.entries(value);
}

/** Problems of a label map (metadata.labels, spec.nodeSelector). */
export function labelMapErrors(value: unknown): string[] {
  const all = entries(value);
  if (!all) return ['must be an object of string keys to string values'];
  const errors: string[] = [];
  for (const [k, v] of all) {
    errors.push(...qualifiedNameErrors(k).map((e) => `key ${show(k)}: ${e}`));
    if (typeof v !== 'string') errors.push(`value of ${show(k)} must be a string, got ${v === null ? 'null' : typeof v}`);
    else errors.push(...labelValueErrors(v).map((e) => `value of ${show(k)} (${show(v)}): ${e}`));
  }
  return errors;
}

/** Problems of metadata.annotations: qualified-name keys, string values, 256 KiB in all. */
export function annotationMapErrors(value: unknown): string[] {
  const all = entries(value);
  if (!all) return ['must be an object of string keys to string values'];
  const errors: string[] = [];
  let bytes = 0;
  for (const [k, v] of all) {
    errors.push(...qualifiedNameErrors(k).map((e) => `key ${show(k)}: ${e}`));
    if (typeof v !== 'string') errors.push(`value of ${show(k)} must be a string, got ${v === null ? 'null' : typeof v}`);
    else bytes += Buffer.byteLength(v);
    bytes += Buffer.byteLength(k);
  }
  if (bytes > ANNOTATIONS_MAX_BYTES) errors.push(`Too long: must have at most ${ANNOTATIONS_MAX_BYTES} bytes`);
  return errors;
}

/** Problems of a path a container uses (workingDir, terminationMessagePath): absolute and clean. */
export function cleanAbsolutePathErrors(value: string): string[] {
  if (value.length > 4096) return ['must be no more than 4096 characters'];
  if (!value.startsWith('/')) return ['must be an absolute path'];
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) return ['must not contain control characters'];
  if (posix.normalize(value) !== value || (value.length > 1 && value.endsWith('/')))
    return [`must be a clean path (no '.', '..', '//' or trailing '/'): ${show(value)}`];
  return [];
}

function byErrors(name: string, errorsOf: (value: unknown) => string[], options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name,
      validator: {
        validate: (value: unknown) => errorsOf(value).length === 0,
        defaultMessage: (args) => errorsOf(args?.value).join('; '),
      },
    },
    options,
  );
}

const stringErrors =
  (check: (value: string) => string[]) =>
  (value: unknown): string[] =>
    typeof value === 'string' ? check(value) : ['must be a string'];

/** A DNS-1123 label (namespaces, container names). */
export const IsDns1123Label = (options?: ValidationOptions): PropertyDecorator => byErrors('isDns1123Label', stringErrors(dns1123LabelErrors), options);
/** A DNS-1123 subdomain (pod and node names). */
export const IsDns1123Subdomain = (options?: ValidationOptions): PropertyDecorator =>
  byErrors('isDns1123Subdomain', stringErrors(dns1123SubdomainErrors), options);
/** A Kubernetes label map. */
export const IsLabelMap = (options?: ValidationOptions): PropertyDecorator => byErrors('isLabelMap', labelMapErrors, options);
/** Kubernetes annotations. */
export const IsAnnotationMap = (options?: ValidationOptions): PropertyDecorator => byErrors('isAnnotationMap', annotationMapErrors, options);
/** An absolute, clean path. */
export const IsCleanAbsolutePath = (options?: ValidationOptions): PropertyDecorator =>
  byErrors('isCleanAbsolutePath', stringErrors(cleanAbsolutePathErrors), options);
/** A qualified name (taint and toleration keys). */
export const IsQualifiedName = (options?: ValidationOptions): PropertyDecorator => byErrors('isQualifiedName', stringErrors(qualifiedNameErrors), options);
