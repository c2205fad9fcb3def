// Quantities are parsed where they are validated, in the contracts; decisions use the same parser.
export { cpuMillis, memoryBytes, parseQuantity } from '#contracts';
