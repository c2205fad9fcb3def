import { createRequire } from 'node:module';
import type * as ClassValidator from 'class-validator';

/**
 * The class-validator decorators and functions the contracts and the apps' configs use, each
 * required from its own file. class-validator's index requires every decorator it has, and
 * with them validator.js and libphonenumber-js: about 320 files, a sixth of what a process
 * loads, and a tenth of the agent's start-up CPU. The storage of every rule is one global
 * (`getMetadataStorage()`), so a class decorated through this module and one decorated through
 * the index are validated alike.
 */
const require = createRequire(import.meta.url);

function from<K extends keyof typeof ClassValidator>(file: string, name: K): (typeof ClassValidator)[K] {
  const exported = (require(`class-validator/cjs/${file}.js`) as Partial<typeof ClassValidator>)[name];
  if (exported === undefined) throw new Error(`class-validator/cjs/${file}.js exports no ${name}`);
  return exported;
}

export type { ValidationArguments, ValidationError, ValidationOptions } from 'class-validator';

export const getMetadataStorage = from('metadata/MetadataStorage', 'getMetadataStorage');
export const registerDecorator = from('register-decorator', 'registerDecorator');

/** The class that walks an object's rules (not part of the index): `validation.ts` hands it only the rules an object can meet. */
export const ValidationExecutor = (
  require('class-validator/cjs/validation/ValidationExecutor.js') as {
    ValidationExecutor: typeof import('class-validator/types/validation/ValidationExecutor.js').ValidationExecutor;
  }
).ValidationExecutor;

const getFromContainer = from('container', 'getFromContainer');
const Validator = from('validation/Validator', 'Validator');
/** class-validator's own `validateSync` (its index's), for an object's decorators; no schema names. */
export const validateSync = (object: object, options?: ClassValidator.ValidatorOptions): ClassValidator.ValidationError[] =>
  getFromContainer(Validator).validateSync(object, options);

export const ArrayMaxSize = from('decorator/array/ArrayMaxSize', 'ArrayMaxSize');
export const ArrayMinSize = from('decorator/array/ArrayMinSize', 'ArrayMinSize');
export const Equals = from('decorator/common/Equals', 'Equals');
export const IsDefined = from('decorator/common/IsDefined', 'IsDefined');
export const IsIn = from('decorator/common/IsIn', 'IsIn');
export const IsOptional = from('decorator/common/IsOptional', 'IsOptional');
export const ValidateBy = from('decorator/common/ValidateBy', 'ValidateBy');
export const ValidateIf = from('decorator/common/ValidateIf', 'ValidateIf');
export const ValidateNested = from('decorator/common/ValidateNested', 'ValidateNested');
export const Max = from('decorator/number/Max', 'Max');
export const Min = from('decorator/number/Min', 'Min');
export const IsIP = from('decorator/string/IsIP', 'IsIP');
export const IsISO8601 = from('decorator/string/IsISO8601', 'IsISO8601');
export const IsUrl = from('decorator/string/IsUrl', 'IsUrl');
export const IsUUID = from('decorator/string/IsUUID', 'IsUUID');
export const isUUID = from('decorator/string/IsUUID', 'isUUID');
export const Matches = from('decorator/string/Matches', 'Matches');
export const MaxLength = from('decorator/string/MaxLength', 'MaxLength');
export const MinLength = from('decorator/string/MinLength', 'MinLength');
export const IsArray = from('decorator/typechecker/IsArray', 'IsArray');
export const IsBoolean = from('decorator/typechecker/IsBoolean', 'IsBoolean');
export const IsInt = from('decorator/typechecker/IsInt', 'IsInt');
export const IsNumber = from('decorator/typechecker/IsNumber', 'IsNumber');
export const IsObject = from('decorator/typechecker/IsObject', 'IsObject');
export const IsString = from('decorator/typechecker/IsString', 'IsString');
