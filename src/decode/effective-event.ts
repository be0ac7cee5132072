import type { Abi, AbiEvent } from 'viem';
import { canonicalSignature, eventSelector, isIndexed } from '../abi/abi-types.js';
import type { ParsedEventSignature } from '../abi/event-signature.js';

/**
 * When the job's signature has no `indexed` markers, local decoding cannot split topics from data;
 * an ABI event with the same topic0 that has markers supplies them (the signature's names win).
 */
export function effectiveEvent(sig: ParsedEventSignature, abi?: Abi): AbiEvent {
  if (sig.hasIndexedMarkers || !abi) return sig.abi;
  const match = abi.find(
    (item): item is AbiEvent =>
      item.type === 'event' && !item.anonymous && item.inputs.some(isIndexed) && eventSelector(canonicalSignature(item)) === sig.topic0,
  );
  if (!match) return sig.abi;
  return {
    ...match,
    name: sig.abi.name,
    inputs: match.inputs.map((param, i) => {
      const own = sig.abi.inputs[i]?.name;
      return own ? { ...param, name: own } : param;
    }),
  };
}
