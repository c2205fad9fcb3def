import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { QUANTITY } from './quantity.validator.js';
import { cpuMillis, memoryBytes, parseQuantity } from './quantity.js';

describe('parseQuantity', () => {
  for (const [quantity, value] of [
    ['250m', 0.25],
    ['1', 1],
    ['0.5', 0.5],
    ['.5', 0.5],
    ['+2', 2],
    ['1k', 1000],
    ['1Ki', 1024],
    ['64Mi', 67_108_864],
    ['1G', 1e9],
    ['1Gi', 2 ** 30],
    ['2Ti', 2 * 2 ** 40],
    ['1e3', 1000],
    ['1E3', 1000],
    ['129e6', 129_000_000],
    ['5e-3', 0.005],
  ] as const) {
    it(`reads "${quantity}" as ${value}`, () => {
      assert.equal(parseQuantity(quantity), value);
    });
  }

  it('passes a number through', () => {
    assert.equal(parseQuantity(1.5), 1.5);
  });

  it('reads the exa suffixes "1E" and "1Ei" as 1e18 and 2^60', () => {
    assert.equal(parseQuantity('1E'), 1e18);
    assert.equal(parseQuantity('1Ei'), 2 ** 60);
  });

  it('throws on "1e", an exponent without digits', () => {
    assert.throws(() => parseQuantity('1e'), RangeError);
  });

  for (const bad of ['12xyz', '', 'm', '-1', '1ki', '1Kb', '1 Gi', 'one', '0x10', '1.2.3']) {
    it(`throws a RangeError naming "${bad}"`, () => {
      assert.throws(
        () => parseQuantity(bad),
        (error: unknown) => error instanceof RangeError && error.message.includes(bad),
      );
    });
  }

  it('accepts exactly what the contract accepts in requests and limits', () => {
    // "1E", "1Ei" and "1e" are left to the two tests above.
    const samples = ['250m', '1', '1.', '.5', '+1', '64Mi', '1G', '1e3', '1E-2', '12xyz', '1ki', '-1', '1Kb', '', '1.5Gi', '100M', '7Ki'];
    const parses = (q: string): boolean => {
      try {
        return Number.isFinite(parseQuantity(q));
      } catch {
        return false;
      }
    };

    assert.deepEqual(
      samples.filter(parses),
      samples.filter((q) => QUANTITY.test(q)),
    );
  });
});

describe('cpuMillis', () => {
  for (const [quantity, millis] of [
    ['250m', 250],
    ['1', 1000],
    ['0.1', 100],
    ['1.5', 1500],
    ['2', 2000],
    ['100m', 100],
    ['1m', 1],
    ['0.0001', 1],
  ] as const) {
    it(`converts "${quantity}" to ${millis} millicores`, () => {
      assert.equal(cpuMillis(quantity), millis);
    });
  }

  it('converts a number of cores', () => {
    assert.equal(cpuMillis(2), 2000);
  });

  it('throws on an invalid quantity', () => {
    assert.throws(() => cpuMillis('fast'), RangeError);
  });
});

describe('memoryBytes', () => {
  for (const [quantity, bytes] of [
    ['64Mi', 67_108_864],
    ['1G', 1_000_000_000],
    ['1e3', 1000],
    ['123Mi', 128_974_848],
    ['128974848', 128_974_848],
    ['1.5Ki', 1536],
    ['1Gi', 1_073_741_824],
  ] as const) {
    it(`converts "${quantity}" to ${bytes} bytes`, () => {
      assert.equal(memoryBytes(quantity), bytes);
    });
  }

  it('rounds a fractional byte count up', () => {
    assert.equal(memoryBytes('1500m'), 2);
  });

  it('throws on an invalid quantity', () => {
    assert.throws(() => memoryBytes('12xyz'), RangeError);
  });
});
