import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';

/** One object key of a JSON document, where kube-apiserver's decoder meets it. */
export interface JsonKey {
  /** The key's path as kube-apiserver names it: `spec.containers[0].image`. */
  path: string;
  /** The key's own name. */
  key: string;
  /** Offset of the key's opening quote in the text. */
  offset: number;
  /** True when the same object named this key before. */
  duplicate: boolean;
}

interface ObjectFrame {
  array: false;
  path: string;
  seen: Set<string>;
  key: string;
  expectKey: boolean;
}

interface ArrayFrame {
  array: true;
  path: string;
  index: number;
}

/** Offset just past the string whose opening quote is at `start`. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) i += 2;
    else if (c === 0x22) return i + 1;
    else i++;
  }
  return i;
}

/**
 * Every object key of a JSON text in document order, with duplicates marked, as
 * sigs.k8s.io/json's strict decoder finds them. JSON.parse keeps the last of two equal keys
 * without a word, and a general-purpose parser that keeps them all (the `yaml` package)
 * costs two orders of magnitude more per body, so this one-pass scan runs beside JSON.parse.
 * It expects text JSON.parse accepted; it never recurses, so no input can exhaust the stack.
 */
export function jsonKeys(text: string): JsonKey[] {
  const keys: JsonKey[] = [];
  const stack: Array<ObjectFrame | ArrayFrame> = [];
  const valuePath = (): string => {
    const top = stack.at(-1);
    if (!top) return '';
    if (top.array) return `${top.path}[${top.index}]`;
    return top.path ? `${top.path}.${top.key}` : top.key;
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '{') {
      stack.push({ array: false, path: valuePath(), seen: new Set(), key: '', expectKey: true });
      i++;
    } else if (c === '[') {
      stack.push({ array: true, path: valuePath(), index: 0 });
      i++;
    } else if (c === '}' || c === ']') {
      stack.pop();
      i++;
    } else if (c === ',') {
      const top = stack.at(-1);
      if (top?.array) top.index++;
      else if (top) top.expectKey = true;
      i++;
    } else if (c === '"') {
      const end = stringEnd(text, i);
      const top = stack.at(-1);
      if (top && !top.array && top.expectKey) {
        const raw = text.slice(i + 1, end - 1);
        const key = raw.includes('\\') ? (JSON.parse(text.slice(i, end)) as string) : raw;
        top.key = key;
        top.expectKey = false;
        keys.push({ path: top.path ? `${top.path}.${key}` : key, key, offset: i, duplicate: top.seen.has(key) });
        top.seen.add(key);
      }
      i = end;
    } else {
      i++;
    }
  }
  return keys;
}

/** A key a YAML mapping names twice, on the (1-based) line of its second use, as go-yaml reports it. */
export interface YamlDuplicateKey {
  line: number;
  key: string;
}

/** The 1-based line of `offset` in `text`. */
export function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/**
 * The keys a YAML (or JSON) text repeats within one mapping, in document order, as go-yaml's
 * strict decoder lists them (`line 5: key "name" already set in map`). Expects text that
 * parses; mappings are walked without resolving aliases.
 */
export function yamlDuplicateKeys(text: string): YamlDuplicateKey[] {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { uniqueKeys: false, lineCounter });
  const found: YamlDuplicateKey[] = [];
  const pending: unknown[] = [document.contents];
  while (pending.length > 0) {
    const node = pending.pop();
    if (isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        const key = pair.key as Node | null;
        if (isScalar(key)) {
          const name = String(key.value);
          if (seen.has(name)) found.push({ line: lineCounter.linePos(key.range?.[0] ?? 0).line, key: name });
          seen.add(name);
        }
        pending.push(pair.value);
      }
    } else if (isSeq(node)) {
      pending.push(...node.items);
    }
  }
  return found.sort((a, b) => a.line - b.line);
}
