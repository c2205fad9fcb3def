import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { getMetadataStorage, ValidationExecutor, validateSync, type ValidationError } from './class-validator.js';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata.js';

/** The cause message of a field jetlet does not know (a Kubernetes field it cannot honour, or a typo). */
export const UNSUPPORTED_FIELD_MESSAGE = 'field is not supported by jetlet';

/** One invalid field: its path in the object (`spec.containers[0].image`) and why. */
export interface FieldCause {
  field: string;
  message: string;
  /** Kubernetes cause reason. */
  reason: 'FieldValueRequired' | 'FieldValueInvalid' | 'FieldValueNotSupported' | 'FieldValueDuplicate' | 'FieldValueForbidden' | 'FieldValueNotFound';
}

/** Thrown by `parseContract` with every invalid field, never only the first. */
export class ContractValidationError extends Error {
  override readonly name = 'ContractValidationError';
  constructor(
    readonly contract: string,
    readonly causes: FieldCause[],
    options?: ErrorOptions,
  ) {
    super(`invalid ${contract}: ${causes.map((c) => `${c.field}: ${c.message}`).join('; ')}`, options);
  }
}

function childPath(parent: string, property: string): string {
  if (/^\d+$/.test(property)) return `${parent}[${property}]`;
  return parent ? `${parent}.${property}` : property;
}

/** The allowed values out of class-validator's isIn message ("... one of the following values: a, b"). */
function enumValues(message: string | undefined): string[] | undefined {
  const list = message?.split('one of the following values: ')[1];
  return list?.split(', ');
}

/** Flattens class-validator's error tree into one cause per bad field. */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): FieldCause[] {
  const causes: FieldCause[] = [];
  for (const error of errors) {
    const field = childPath(parent, error.property);
    const constraints = error.constraints ?? {};
    if ('whitelistValidation' in constraints) {
      causes.push({ field, reason: 'FieldValueNotSupported', message: UNSUPPORTED_FIELD_MESSAGE });
    } else if (Object.keys(constraints).length > 0) {
      // Kubernetes' wording: an empty required string is "Required value", a value outside an enum "Unsupported value".
      const missing = error.value === undefined || error.value === null || error.value === '';
      const allowed = enumValues(constraints.isIn);
      if (missing) causes.push({ field, reason: 'FieldValueRequired', message: 'Required value' });
      else if (allowed) {
        causes.push({
          field,
          reason: 'FieldValueNotSupported',
          message: `Unsupported value: ${JSON.stringify(error.value)}: supported values: ${allowed.map((v) => JSON.stringify(v)).join(', ')}`,
        });
      } else {
        // Kubernetes' wording names the bad value: `Invalid value: "X": why`.
        const why = Object.values(constraints).join('; ');
        const message = /^(Invalid|Unsupported) value/.test(why) ? why : `Invalid value: ${JSON.stringify(error.value)}: ${why}`;
        causes.push({ field, reason: 'FieldValueInvalid', message });
      }
    }
    if (error.children?.length) causes.push(...flattenValidationErrors(error.children, field));
  }
  return causes;
}

/** The part of class-validator's rule storage that `memoiseRuleLookup` wraps. */
interface RuleStorage {
  getTargetValidationMetadatas(target: unknown, schema: unknown, always: boolean, strictGroups: boolean, groups?: string[]): ValidationMetadata[];
  groupByPropertyName(metadata: ValidationMetadata[]): Record<string, ValidationMetadata[]>;
  addValidationMetadata(metadata: ValidationMetadata): void;
  addConstraintMetadata(metadata: unknown): void;
}

/**
 * class-validator looks a class's rules up again for every object it validates, scanning
 * every class it knows for ancestors, and groups them by property each time: most of a
 * pod's validation went there. The rules are fixed once the contract classes are loaded,
 * so the lookup is kept per class (for validations without groups, the only kind here) and
 * forgotten whenever a rule is added. Callers only read what it returns.
 */
function memoiseRuleLookup(): void {
  const storage = getMetadataStorage() as unknown as RuleStorage;
  const lookup = storage.getTargetValidationMetadatas.bind(storage);
  const group = storage.groupByPropertyName.bind(storage);
  const addRule = storage.addValidationMetadata.bind(storage);
  const addConstraint = storage.addConstraintMetadata.bind(storage);
  // By class, then by schema name: class-validator passes the parent's class name down as one.
  let byClass = new Map<unknown, Map<unknown, ValidationMetadata[]>>();
  let grouped = new WeakMap<ValidationMetadata[], Record<string, ValidationMetadata[]>>();
  const forget = (): void => {
    byClass = new Map();
    grouped = new WeakMap();
  };
  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    if (always || strictGroups || (groups !== undefined && groups.length > 0)) return lookup(target, schema, always, strictGroups, groups);
    let bySchema = byClass.get(target);
    if (!bySchema) byClass.set(target, (bySchema = new Map<unknown, ValidationMetadata[]>()));
    let rules = bySchema.get(schema);
    if (!rules) bySchema.set(schema, (rules = lookup(target, schema, always, strictGroups, groups)));
    return rules;
  };
  storage.groupByPropertyName = (metadata) => {
    let byProperty = grouped.get(metadata);
    if (!byProperty) grouped.set(metadata, (byProperty = group(metadata)));
    const object = validating;
    validating = undefined;
    return object === undefined ? byProperty : rulesItCanMeet(byProperty, object);
  };
  storage.addValidationMetadata = (metadata) => {
    forget();
    addRule(metadata);
  };
  storage.addConstraintMetadata = (metadata) => {
    forget();
    addConstraint(metadata);
  };
}

/** The object whose rules `ValidationExecutor.execute` is about to group by property (see `walkOnlyWhatIsThere`). */
let validating: object | undefined;

type RulesByProperty = Record<string, ValidationMetadata[]>;

/** A class's rules by property, and which of its properties are `@IsOptional`. */
interface OptionalProperties {
  names: string[];
  byHeld: Map<string, RulesByProperty>;
}

const optionalOf = new WeakMap<RulesByProperty, OptionalProperties>();
/** The most sets of held optional properties kept per class; past it, each set is worked out again (a client can send any of 2^n). */
const HELD_SETS_KEPT = 64;

const isOptionalRule = (rule: ValidationMetadata): boolean => rule.type === 'conditionalValidation' && rule.name === 'isOptional';

/**
 * Whether a property's rules may be left out when an object lacks it: it is `@IsOptional`
 * and has no other condition. class-validator calls every condition of a property, a
 * `@ValidateIf` included, before it skips a missing optional one, and such a condition may
 * read other fields or throw; so a property with one is always walked.
 */
const skippedWhenMissing = (rules: ValidationMetadata[]): boolean =>
  rules.some(isOptionalRule) && rules.every((rule) => rule.type !== 'conditionalValidation' || isOptionalRule(rule));

/**
 * The rules of `byProperty` less those of the `@IsOptional` properties `object` does not have.
 * class-validator would walk each of those only to skip it (its optional check fails on a
 * missing value, and it then checks nothing else of it), so leaving them out changes no
 * result, not even the order of the errors; and a property the object has, a null one
 * included, keeps its rules, so the whitelist still sees every field it was sent. Which
 * properties an object has is read once, before its rules run: a rule must not add fields
 * to the object it checks (none of jetlet's do).
 */
function rulesItCanMeet(byProperty: RulesByProperty, object: object): RulesByProperty {
  let optional = optionalOf.get(byProperty);
  if (!optional) {
    const names = Object.keys(byProperty).filter((name) => skippedWhenMissing(byProperty[name]));
    optionalOf.set(byProperty, (optional = { names, byHeld: new Map() }));
  }
  if (optional.names.length === 0) return byProperty;
  let held = '';
  for (const name of optional.names) held += name in object ? '1' : '0';
  let rules = optional.byHeld.get(held);
  if (!rules) {
    const absent = new Set(optional.names.filter((_, i) => held[i] === '0'));
    rules = {};
    for (const name of Object.keys(byProperty)) if (!absent.has(name)) rules[name] = byProperty[name];
    if (optional.byHeld.size < HELD_SETS_KEPT) optional.byHeld.set(held, rules);
  }
  return rules;
}

/**
 * class-validator walks every property a class declares, for every object it validates: it
 * filters the property's rules by kind five times and makes an error record for it, which it
 * throws away when it stays empty. A pod's assignment walks about seventy properties so, and
 * three in five are optional and absent. So the executor tells the grouping which object it
 * is grouping for, and is given only the rules that object can meet (`rulesItCanMeet`).
 */
function walkOnlyWhatIsThere(): void {
  type Executor = InstanceType<typeof ValidationExecutor>;
  const execute: (this: Executor, ...args: Parameters<Executor['execute']>) => void = Reflect.get(ValidationExecutor.prototype, 'execute');
  ValidationExecutor.prototype.execute = function (this: Executor, object, targetSchema, errors) {
    validating = walkingEveryRule === 0 && typeof object === 'object' && object !== null ? object : undefined;
    try {
      execute.call(this, object, targetSchema, errors);
    } finally {
      validating = undefined;
    }
  };
}

/** Above 0 while `withEveryRuleWalked` runs. */
let walkingEveryRule = 0;

/**
 * Runs `work` with class-validator walking every rule of every property, as it does on its
 * own: what `rulesItCanMeet` is compared against.
 */
export function withEveryRuleWalked<T>(work: () => T): T {
  walkingEveryRule++;
  try {
    return work();
  } finally {
    walkingEveryRule--;
  }
}

memoiseRuleLookup();
walkOnlyWhatIsThere();

/**
 * Turns a plain object into a validated instance of `cls`, rejecting unknown fields.
 * Throws ContractValidationError listing every bad field.
 */
export function parseContract<T extends object>(cls: ClassConstructor<T>, plain: unknown, contract = cls.name): T {
  if (typeof plain !== 'object' || plain === null || Array.isArray(plain)) {
    throw new ContractValidationError(contract, [{ field: '', reason: 'FieldValueInvalid', message: 'must be an object' }]);
  }
  const instance = plainToInstance(cls, plain);
  const errors = validateSync(instance, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: false });
  if (errors.length > 0) throw new ContractValidationError(contract, flattenValidationErrors(errors));
  return instance;
}
