export * from './apply-schema.js';
export * from './field-set.js';
export * from './managed-fields.js';
export { ApplySchemaError, compare, merge, toFieldSet } from './typed-value.js';
