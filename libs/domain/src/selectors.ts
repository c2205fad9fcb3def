/**
 * Kubernetes label and field selectors, parsed and matched as the API server does
 * (apimachinery `pkg/labels` and `pkg/fields`). Pure.
 */

/** A selector that cannot be parsed, or names a field the kind does not support. The API answers 400 with `message`. */
export class SelectorError extends Error {
  override readonly name = 'SelectorError';
}

export type LabelOperator = 'Exists' | 'DoesNotExist' | '=' | '==' | '!=' | 'in' | 'notin' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

export interface LabelSelector {
  readonly requirements: readonly LabelRequirement[];
  /** True for the empty selector, which matches everything. */
  readonly empty: boolean;
  matches(labels: Readonly<Record<string, string>> | undefined): boolean;
}

type Token = 'end' | ')' | ',' | '!' | '==' | '=' | '>' | 'id' | 'in' | '<' | '!=' | 'notin' | '(' | 'error';

const SYMBOLS: Record<string, Token> = { ')': ')', ',': ',', '!': '!', '==': '==', '=': '=', '>': '>', '<': '<', '!=': '!=', '(': '(' };
const KEYWORDS: Record<string, Token> = { in: 'in', notin: 'notin' };
const isWhitespace = (ch: string): boolean => ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
const isSymbol = (ch: string): boolean => '=!(),<>'.includes(ch);

/** The label selector lexer: identifiers run until whitespace or a symbol; symbols take the longest match. */
function lex(input: string): Array<{ token: Token; literal: string }> {
  const items: Array<{ token: Token; literal: string }> = [];
  let pos = 0;
  for (;;) {
    while (pos < input.length && isWhitespace(input[pos] ?? '')) pos++;
    if (pos >= input.length) {
      items.push({ token: 'end', literal: '' });
      return items;
    }
    const ch = input[pos] ?? '';
    if (isSymbol(ch)) {
      // The longest symbol that is a token: "!=" over "!", "==" over "=".
      let buffer = '';
      let last: { token: Token; literal: string } | undefined;
      while (pos < input.length && isSymbol(input[pos] ?? '')) {
        buffer += input[pos];
        const token = SYMBOLS[buffer];
        if (token) last = { token, literal: buffer };
        else if (last) break;
        pos++;
      }
      items.push(last ?? { token: 'error', literal: `error expected: keyword found '${buffer}'` });
      continue;
    }
    let literal = '';
    while (pos < input.length && !isSymbol(input[pos] ?? '') && !isWhitespace(input[pos] ?? '')) literal += input[pos++];
    items.push({ token: KEYWORDS[literal] ?? 'id', literal });
  }
}

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const NAME_MESSAGE =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_MESSAGE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/** Kubernetes' IsQualifiedName: an optional DNS-subdomain prefix and a name of at most 63 characters. */
export function qualifiedNameErrors(value: string): string[] {
  const parts = value.split('/');
  let name = value;
  const errors: string[] = [];
  if (parts.length === 2) {
    const [prefix = '', rest = ''] = parts;
    name = rest;
    if (prefix.length === 0) errors.push('prefix part must be non-empty');
    else if (prefix.length > 253) errors.push('prefix part must be no more than 253 characters');
    else if (!DNS1123_SUBDOMAIN.test(prefix))
      errors.push(
        "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      );
  } else if (parts.length > 2) {
    return [
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errors.push('name part must be non-empty');
  else if (name.length > 63) errors.push('name part must be no more than 63 characters');
  if (name.length > 0 && !QUALIFIED_NAME.test(name)) errors.push(NAME_MESSAGE);
  return errors;
}

/** Kubernetes' IsValidLabelValue. */
export function labelValueErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push('must be no more than 63 characters');
  if (value.length > 0 && !QUALIFIED_NAME.test(value)) errors.push(VALUE_MESSAGE);
  return errors;
}

function requirement(key: string, operator: LabelOperator, values: string[]): LabelRequirement {
  const errors: string[] = [];
  const keyErrors = qualifiedNameErrors(key);
  if (keyErrors.length > 0) errors.push(`key: Invalid value: ${JSON.stringify(key)}: ${keyErrors.join('; ')}`);
  if ((operator === 'gt' || operator === 'lt') && values.some((v) => !/^[-+]?\d+$/.test(v)))
    values.forEach((v, i) => {
      if (!/^[-+]?\d+$/.test(v)) errors.push(`values[${i}]: Invalid value: ${JSON.stringify(v)}: for 'Gt', 'Lt' operators, the value must be an integer`);
    });
  values.forEach((v, i) => {
    const valueErrors = labelValueErrors(v);
    if (valueErrors.length > 0) errors.push(`values[${i}][${key}]: Invalid value: ${JSON.stringify(v)}: ${valueErrors.join('; ')}`);
  });
  if (errors.length === 1) throw new SelectorError(errors[0]);
  if (errors.length > 1) throw new SelectorError(`[${errors.join(', ')}]`);
  return { key, operator, values };
}

class Parser {
  private position = 0;
  constructor(private readonly items: Array<{ token: Token; literal: string }>) {}

  /** In the values context `in` and `notin` are ordinary identifiers. */
  private peek(values: boolean): { token: Token; literal: string } {
    const item = this.items[this.position] ?? { token: 'end' as const, literal: '' };
    return values && (item.token === 'in' || item.token === 'notin') ? { token: 'id', literal: item.literal } : item;
  }

  private next(values: boolean): { token: Token; literal: string } {
    const item = this.peek(values);
    this.position++;
    return item;
  }

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    for (;;) {
      const { token, literal } = this.peek(true);
      if (token === 'end') return requirements;
      if (token !== 'id' && token !== '!') throw new SelectorError(`found '${literal}', expected: !, identifier, or 'end of string'`);
      try {
        requirements.push(this.requirement());
      } catch (error) {
        throw new SelectorError(`unable to parse requirement: ${(error as Error).message}`);
      }
      const after = this.next(true);
      if (after.token === 'end') return requirements;
      if (after.token !== ',') throw new SelectorError(`found '${after.literal}', expected: ',' or 'end of string'`);
      const following = this.peek(true);
      if (following.token !== 'id' && following.token !== '!') throw new SelectorError(`found '${following.literal}', expected: identifier after ','`);
    }
  }

  private requirement(): LabelRequirement {
    let item = this.next(true);
    let negated = false;
    if (item.token === '!') {
      negated = true;
      item = this.next(true);
    }
    if (item.token !== 'id') throw new SelectorError(`found '${item.literal}', expected: identifier`);
    const key = item.literal;
    const keyErrors = qualifiedNameErrors(key);
    if (keyErrors.length > 0) throw new SelectorError(`key: Invalid value: ${JSON.stringify(key)}: ${keyErrors.join('; ')}`);
    const ahead = this.peek(true).token;
    if (ahead === 'end' || ahead === ',') return requirement(key, negated ? 'DoesNotExist' : 'Exists', []);
    if (negated) return requirement(key, 'DoesNotExist', []);
    const op = this.next(false);
    const operator = ({ in: 'in', notin: 'notin', '=': '=', '==': '==', '!=': '!=', '>': 'gt', '<': 'lt' } as Partial<Record<Token, LabelOperator>>)[op.token];
    if (!operator) throw new SelectorError(`found '${op.literal}', expected: in, notin, =, ==, !=, gt, lt`);
    const values = operator === 'in' || operator === 'notin' ? this.valueSet() : this.exactValue();
    return requirement(key, operator, values);
  }

  private valueSet(): string[] {
    const open = this.next(true);
    if (open.token !== '(') throw new SelectorError(`found '${open.literal}' expected: '('`);
    const first = this.peek(true);
    if (first.token === ')') {
      this.next(true);
      return [''];
    }
    if (first.token !== 'id' && first.token !== ',') throw new SelectorError(`found '${first.literal}', expected: ',', ')' or identifier`);
    const values = this.identifiers();
    if (this.next(true).token !== ')') throw new SelectorError(`found '${first.literal}', expected: ')'`);
    return [...values].sort();
  }

  /** A comma-separated list; empty members (`(a,)`, `(,a)`) are the empty value, as in Kubernetes. */
  private identifiers(): Set<string> {
    const values = new Set<string>();
    for (;;) {
      const item = this.next(true);
      if (item.token === 'id') {
        values.add(item.literal);
        const after = this.peek(true);
        if (after.token === ',') continue;
        if (after.token === ')') return values;
        throw new SelectorError(`found '${after.literal}', expected: ',' or ')'`);
      }
      if (item.token !== ',') throw new SelectorError(`found '${item.literal}', expected: ',', or identifier`);
      if (values.size === 0) values.add('');
      const after = this.peek(true);
      if (after.token === ')') {
        values.add('');
        return values;
      }
      if (after.token === ',') {
        this.next(true);
        values.add('');
      }
    }
  }

  private exactValue(): string[] {
    const ahead = this.peek(true);
    if (ahead.token === 'end' || ahead.token === ',') return [''];
    const item = this.next(true);
    if (item.token === 'id') return [item.literal];
    throw new SelectorError(`found '${item.literal}', expected: identifier`);
  }
}

function matchesRequirement(r: LabelRequirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = has ? labels[r.key] : undefined;
  switch (r.operator) {
    case '=':
    case '==':
    case 'in':
      return value !== undefined && r.values.includes(value);
    case '!=':
    case 'notin':
      return value === undefined || !r.values.includes(value);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'gt':
    case 'lt': {
      if (value === undefined || !/^[-+]?\d+$/.test(value)) return false;
      const [bound = ''] = r.values;
      return r.operator === 'gt' ? BigInt(value) > BigInt(bound) : BigInt(value) < BigInt(bound);
    }
  }
}

/** Parses a `labelSelector` query value; the empty string (or undefined) selects everything. */
export function parseLabelSelector(input: string | undefined): LabelSelector {
  const requirements = input === undefined ? [] : new Parser(lex(input)).parse();
  requirements.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return {
    requirements,
    empty: requirements.length === 0,
    matches: (labels) => requirements.every((r) => matchesRequirement(r, labels ?? {})),
  };
}

export interface FieldRequirement {
  field: string;
  operator: '=' | '==' | '!=';
  value: string;
}

export interface FieldSelector {
  readonly requirements: readonly FieldRequirement[];
  readonly empty: boolean;
  /** `fields` maps each supported field label to its value as a string, as Kubernetes' `ToSelectableFields`. */
  matches(fields: Readonly<Record<string, string>>): boolean;
}

/** Splits on commas that no backslash escapes, as `fields.splitTerms`. */
function splitTerms(input: string): string[] {
  if (input === '') return [];
  const terms: string[] = [];
  let current = '';
  for (let i = 0; i < input.length; i++) {
    const ch = input[i] ?? '';
    if (ch === '\\' && i + 1 < input.length) {
      current += ch + (input[i + 1] ?? '');
      i++;
    } else if (ch === ',') {
      terms.push(current);
      current = '';
    } else current += ch;
  }
  terms.push(current);
  return terms;
}

/** Finds the first unescaped operator, trying `!=`, `==`, `=` at each position, as `fields.splitTerm`. */
function splitTerm(term: string): FieldRequirement | undefined {
  for (let i = 0; i < term.length; i++) {
    if (term[i] === '\\') {
      i++;
      continue;
    }
    for (const op of ['!=', '==', '='] as const) {
      if (term.startsWith(op, i)) return { field: term.slice(0, i), operator: op, value: term.slice(i + op.length) };
    }
  }
  return undefined;
}

function unescapeValue(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const ch = value[i] ?? '';
    if (ch === '\\') {
      const next = value[i + 1];
      if (next !== '\\' && next !== ',' && next !== '=') throw new SelectorError(`invalid field selector: invalid escape sequence: \\${next ?? ''}`);
      out += next;
      i++;
    } else if (ch === ',' || ch === '=') {
      throw new SelectorError(`invalid field selector: unescaped '${ch}' in value`);
    } else out += ch;
  }
  return out;
}

/**
 * Parses a `fieldSelector` query value. A field not in `supported` is the API server's
 * "field label not supported" error; the empty string (or undefined) selects everything.
 */
export function parseFieldSelector(input: string | undefined, supported: readonly string[]): FieldSelector {
  const requirements: FieldRequirement[] = [];
  for (const part of splitTerms(input ?? '').sort()) {
    if (part === '') continue;
    const term = splitTerm(part);
    if (!term) throw new SelectorError(`invalid selector: '${input ?? ''}'; can't understand '${part}'`);
    requirements.push({ ...term, value: unescapeValue(term.value) });
  }
  for (const r of requirements) if (!supported.includes(r.field)) throw new SelectorError(`field label not supported: ${r.field}`);
  return {
    requirements,
    empty: requirements.length === 0,
    matches: (fields) => requirements.every((r) => (fields[r.field] === r.value) !== (r.operator === '!=')),
  };
}
