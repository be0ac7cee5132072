import { decodeAbiParameters, type AbiParameter, type Hex } from 'viem';
import { typeInfo } from '../abi/abi-types.js';

/**
 * ABI parameter decoding as viem's decodeAbiParameters, without its checksummed addresses (a
 * keccak per address, and the columns hold lowercase hex anyway). Each address is decoded as a
 * uint160 word (viem reads the whole word without a range check) and written back as viem's
 * address would be: the low 20 bytes of the word, as lowercase 0x hex. Everything else (offsets,
 * lengths, the size budget, errors) is viem's own decoding.
 */
export type ParametersDecoder = (data: Hex) => readonly unknown[];

const ADDRESS_MASK = (1n << 160n) - 1n;

function addressFromWord(value: unknown): unknown {
  return typeof value === 'bigint' ? `0x${(value & ADDRESS_MASK).toString(16).padStart(40, '0')}` : value;
}

/** The parameter with every address (nested too) read as uint160. */
function withAddressesAsWords(param: AbiParameter): AbiParameter {
  const base = param.type.replace(/(\[\d*\])+$/, '');
  const suffix = param.type.slice(base.length);
  if (base === 'address') return { ...param, type: `uint160${suffix}` } as AbiParameter;
  const components = (param as { components?: readonly AbiParameter[] }).components;
  if (base === 'tuple' && components) return { ...param, components: components.map(withAddressesAsWords) } as AbiParameter;
  return param;
}

/** Turns the uint160 words of withAddressesAsWords back into addresses; null when the type holds none. */
function addressRestorer(param: AbiParameter): ((value: unknown) => unknown) | null {
  const info = typeInfo(param);
  if (info.kind === 'array') {
    const element = addressRestorer(info.element);
    return element && ((value) => (Array.isArray(value) ? value.map(element) : value));
  }
  if (info.kind === 'address') return addressFromWord;
  if (info.kind !== 'tuple') return null;
  const parts = info.components.map(addressRestorer);
  if (parts.every((p) => p === null)) return null;
  // viem returns a tuple as an array when a component is unnamed, else as an object by name.
  return (value) => {
    if (Array.isArray(value))
      return (value as unknown[]).map((v, i) => {
        const restore = parts[i];
        return restore ? restore(v) : v;
      });
    if (typeof value !== 'object' || value === null) return value;
    const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    info.components.forEach((c, i) => {
      const restore = parts[i];
      if (restore && c.name) out[c.name] = restore(out[c.name]);
    });
    return out;
  };
}

/** Compiled once per function: the substituted parameters and what restores their addresses. */
export function compileParametersDecoder(params: readonly AbiParameter[]): ParametersDecoder {
  const restorers = params.map(addressRestorer);
  if (restorers.every((r) => r === null)) return (data) => decodeAbiParameters(params, data);
  const asWords = params.map(withAddressesAsWords);
  return (data) => {
    const values = decodeAbiParameters(asWords, data) as unknown[];
    for (let i = 0; i < values.length; i++) {
      const restore = restorers[i];
      if (restore) values[i] = restore(values[i]);
    }
    return values;
  };
}
