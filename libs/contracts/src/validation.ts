import { createRequire } from 'node:module';
import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { getMetadataStorage, validateSync, ValidationTypes, type ValidationError, type ValidatorOptions } from 'class-validator';
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
    return byProperty;
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
memoiseRuleLookup();

/** The options of every `parseContract`: the only validations `skipUnsetOptionalFields` takes over. */
const CONTRACT_OPTIONS: ValidatorOptions = Object.freeze({ whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: false });

/** One property's rules, split as class-validator's executor splits them for every object. */
interface PropertyPlan {
  property: string;
  defined: ValidationMetadata[];
  rules: ValidationMetadata[];
  conditions: ValidationMetadata[];
  awaits: boolean;
}

/** The parts of class-validator's executor `skipUnsetOptionalFields` uses. */
interface Executor {
  metadataStorage: RuleStorage;
  validatorOptions?: ValidatorOptions;
  awaitingPromises: Array<Promise<unknown>>;
  execute: (this: Executor, object: Record<string, unknown>, targetSchema: string | undefined, errors: ValidationError[]) => void;
  whitelist(object: object, grouped: Record<string, ValidationMetadata[]>, errors: ValidationError[]): void;
  conditionalValidations(object: object, value: unknown, conditions: ValidationMetadata[]): boolean;
  performValidations(
    object: object,
    value: unknown,
    property: string,
    defined: ValidationMetadata[],
    rules: ValidationMetadata[],
    errors: ValidationError[],
  ): void;
}

/**
 * class-validator walks every property a class declares for every object, splitting its
 * rules and recording an empty error for each before dropping it: a pod's few set fields
 * paid for every optional one it leaves out. For the contracts' own options, the
 * split is made once per class, and a property whose condition fails (`@IsOptional` on an
 * unset field, `@ValidateIf`) is passed over, which is what class-validator does with it
 * after the empty error (its `performValidations` returns there, and the empty error is
 * stripped). Every other validation runs class-validator's own code.
 */
function skipUnsetOptionalFields(): void {
  const executor = (createRequire(import.meta.url)('class-validator/cjs/validation/ValidationExecutor.js') as { ValidationExecutor: { prototype: Executor } })
    .ValidationExecutor.prototype;
  const execute = executor.execute;
  const plans = new WeakMap<Record<string, ValidationMetadata[]>, PropertyPlan[]>();
  const planOf = (grouped: Record<string, ValidationMetadata[]>): PropertyPlan[] => {
    let plan = plans.get(grouped);
    if (plan) return plan;
    plan = Object.entries(grouped).map(([property, all]) => {
      const rules = all.filter((m) => m.type !== ValidationTypes.IS_DEFINED && m.type !== ValidationTypes.WHITELIST);
      return {
        property,
        defined: all.filter((m) => m.type === ValidationTypes.IS_DEFINED),
        rules,
        conditions: rules.filter((m) => m.type === ValidationTypes.CONDITIONAL_VALIDATION),
        awaits: rules.some((m) => m.type === ValidationTypes.PROMISE_VALIDATION),
      };
    });
    plans.set(grouped, plan);
    return plan;
  };
  executor.execute = function (this: Executor, object, targetSchema, errors) {
    if (this.validatorOptions !== CONTRACT_OPTIONS) return execute.call(this, object, targetSchema, errors);
    const grouped = this.metadataStorage.groupByPropertyName(this.metadataStorage.getTargetValidationMetadatas(object.constructor, targetSchema, false, false));
    this.whitelist(object, grouped, errors);
    for (const { property, defined, rules, conditions, awaits } of planOf(grouped)) {
      const value = object[property];
      if (value instanceof Promise && awaits) {
        this.awaitingPromises.push(value.then((resolved) => this.performValidations(object, resolved, property, defined, rules, errors)));
      } else if (conditions.length === 0 || this.conditionalValidations(object, value, conditions)) {
        this.performValidations(object, value, property, defined, rules, errors);
      }
    }
  };
}
skipUnsetOptionalFields();

/**
 * Turns a plain object into a validated instance of `cls`, rejecting unknown fields.
 * Throws ContractValidationError listing every bad field.
 */
export function parseContract<T extends object>(cls: ClassConstructor<T>, plain: unknown, contract = cls.name): T {
  if (typeof plain !== 'object' || plain === null || Array.isArray(plain)) {
    throw new ContractValidationError(contract, [{ field: '', reason: 'FieldValueInvalid', message: 'must be an object' }]);
  }
  const instance = plainToInstance(cls, plain);
  const errors = validateSync(instance, CONTRACT_OPTIONS);
  if (errors.length > 0) throw new ContractValidationError(contract, flattenValidationErrors(errors));
  return instance;
}
