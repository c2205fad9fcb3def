const SUFFIX: Record<string, number> = {
  '': 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** The value of a Kubernetes quantity ("250m" → 0.25, "64Mi" → 67108864, "1e3" → 1000). */
export function parseQuantity(quantity: string | number): number {
  if (typeof quantity === 'number') return quantity;
  // Binary suffixes before their one-letter prefixes, and an exponent only with digits ("1E" is exa).
  const match = /^\+?(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?\d+|[mkMGTPE])?$/.exec(quantity.trim());
  if (!match) throw new RangeError(`not a quantity: ${quantity}`);
  const [, number, suffix] = match;
  if (suffix && /^[eE][+-]?\d/.test(suffix)) return Number(`${number}${suffix}`);
  const factor = SUFFIX[suffix ?? ''];
  if (factor === undefined) throw new RangeError(`unknown quantity suffix in ${quantity}`);
  return Number(number) * factor;
}

/** CPU quantity in millicores, rounded up as Kubernetes does. */
export function cpuMillis(quantity: string | number): number {
  return Math.ceil(parseQuantity(quantity) * 1000 - 1e-9);
}

/** Memory quantity in bytes. */
export function memoryBytes(quantity: string | number): number {
  return Math.ceil(parseQuantity(quantity) - 1e-9);
}
