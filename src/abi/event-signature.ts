import type { AbiEvent, AbiParameter, Hex } from 'viem';
// abitype is the parser viem re-exports; imported directly, a run that only checks its job does not load viem.
import { parseAbiItem } from 'abitype';
import { UserInputError, errorMessage } from '../errors.js';
import { canonicalSignature, eventSelector, isIndexed, isSupportedType } from './abi-types.js';

export interface ParsedEventSignature {
  abi: AbiEvent;
  name: string;
  /** Types only, the string topic0 hashes: `Transfer(address,address,uint256)`. */
  canonical: string;
  topic0: Hex;
  /** True when at least one parameter is marked `indexed`. */
  hasIndexedMarkers: boolean;
  /** Canonical types with names and `indexed` markers, the form the service accepts:
   *  `Transfer(address indexed from, address indexed to, uint256 value)`. */
  human: string;
}

export class InvalidSignatureError extends UserInputError {
  override name = 'InvalidSignatureError';
  /** What is wrong, without the signature: "a bare topic0 hash is not accepted". */
  readonly problem: string;
  constructor(signature: string, problem: string, hint: string, cause?: unknown) {
    super(`Invalid event signature: ${problem}`, {
      details: `signature: ${JSON.stringify(signature)}`,
      hint,
      cause,
    });
    this.problem = problem;
  }
}

const EXAMPLE = 'Transfer(address indexed from, address indexed to, uint256 value)';
const TOPIC_HASH_RE = /^0x[0-9a-fA-F]{64}$/;
const ALIAS_RE = /(?<![\w$])(uint|int|byte|ufixed|fixed)(?=\s|\[|,|\)|$)/;
const CANONICAL_OF: Record<string, string> = {
  uint: 'uint256',
  int: 'int256',
  byte: 'bytes1',
};

/**
 * Rewrites the Solidity aliases uint, int and byte to their canonical types (uint256, int256,
 * bytes1), which is what they mean in a declaration. For user-written signatures (job files);
 * parseEventSignature itself refuses aliases, as the service does.
 */
export function canonicaliseTypeAliases(sig: string): string {
  return sig.replace(new RegExp(ALIAS_RE.source, 'g'), (alias) => CANONICAL_OF[alias] ?? alias);
}

/**
 * Parses a human-readable event signature (with or without the `event` keyword, names optional,
 * `indexed` markers optional) into its ABI item, canonical form and topic0.
 * Throws InvalidSignatureError (exit code 2) with a hint for the usual mistakes.
 */
export function parseEventSignature(sig: string): ParsedEventSignature {
  const text = normaliseWhitespace(sig.trim().replace(/;\s*$/, '').trim());
  const keyword = refuseCommonMistakes(sig, text);
  const abi = parseEventItem(sig, text, keyword);
  const indexedCount = checkEventInputs(sig, abi);
  const canonical = canonicalSignature(abi);
  return {
    abi,
    name: abi.name,
    canonical,
    topic0: eventSelector(canonical),
    hasIndexedMarkers: indexedCount > 0,
    human: `${abi.name}(${abi.inputs.map(humanParam).join(', ')})`,
  };
}

/**
 * Whitespace means nothing in a signature beyond separating words: runs of it become one space,
 * none before or inside the parentheses, one after each comma ("Transfer (address  indexed from)"
 * reads as "Transfer(address indexed from)").
 */
function normaliseWhitespace(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .replace(/\s*\(\s*/g, '(')
    .replace(/\s*\)/g, ')')
    .replace(/\s*\[\s*/g, '[')
    .replace(/\s*\]/g, ']')
    .replace(/\s*,\s*/g, ', ');
}

/** The usual mistakes, refused before parsing with a hint each; returns the leading keyword, if any. */
function refuseCommonMistakes(sig: string, text: string): string | undefined {
  if (text === '') {
    throw new InvalidSignatureError(sig, 'it is empty', `Write the event's signature, e.g. ${EXAMPLE}.`);
  }
  if (TOPIC_HASH_RE.test(text)) {
    throw new InvalidSignatureError(
      sig,
      'a bare topic0 hash is not accepted',
      `Write the event's human-readable signature instead, e.g. ${EXAMPLE}: the service does not reliably accept a topic hash, and decoding needs the parameter types.`,
    );
  }
  const keyword = /^(\w+)\s/.exec(text)?.[1];
  if (keyword === 'function' || keyword === 'error' || keyword === 'constructor' || keyword === 'struct') {
    throw new InvalidSignatureError(
      sig,
      `it is a ${keyword}, not an event`,
      `Export events with an event signature, e.g. ${EXAMPLE}; function calls come with the wallet transactions dataset (decoded_function_name, decoded_inputs_json).`,
    );
  }
  if (/\)\s*anonymous$/.test(text)) {
    throw new InvalidSignatureError(
      sig,
      'anonymous events have no topic0',
      'The service selects events by topic0, so an anonymous event cannot be exported by signature.',
    );
  }
  const alias = ALIAS_RE.exec(text.replace(/^event\s+/, ''))?.[1];
  if (alias) {
    const canonical = CANONICAL_OF[alias];
    throw new InvalidSignatureError(
      sig,
      `type "${alias}" is not canonical`,
      canonical
        ? `Write ${canonical} instead of ${alias}: topic0 is the hash of the canonical types, and the service requires them.`
        : `Fixed-point types (${alias}) are not supported by the ABI decoders; the service cannot decode them either.`,
    );
  }
  return keyword;
}

/** The signature as an ABI event item (the `event` keyword added when missing). */
function parseEventItem(sig: string, text: string, keyword: string | undefined): AbiEvent {
  const withKeyword = keyword === 'event' ? text : `event ${text}`;
  let item: ReturnType<typeof parseAbiItem>;
  try {
    item = parseAbiItem(withKeyword);
  } catch (err) {
    const e = err as { shortMessage?: string; details?: string; metaMessages?: string[] };
    const why = [e.shortMessage ?? errorMessage(err), e.details, ...(e.metaMessages ?? []).map((m) => m.split(' More info')[0])]
      .filter(Boolean)
      .join(' ');
    throw new InvalidSignatureError(
      sig,
      `it does not parse (${why})`,
      `Use Solidity syntax with canonical types, e.g. ${EXAMPLE}; tuples are written inline as (uint256 a, address b) and arrays as uint256[] or address[2].`,
      err,
    );
  }
  if (item.type !== 'event') {
    throw new InvalidSignatureError(sig, `it is a ${item.type}, not an event`, `Write an event signature, e.g. ${EXAMPLE}.`);
  }
  return item as AbiEvent;
}

/** Every parameter of a supported type, at most 3 indexed; returns how many are. */
function checkEventInputs(sig: string, abi: AbiEvent): number {
  for (const input of abi.inputs) {
    if (!isSupportedType(input)) {
      throw new InvalidSignatureError(
        sig,
        `parameter type "${input.type}" is not supported`,
        'Use canonical Solidity ABI types: address, bool, string, bytes, bytes1..bytes32, uint8..uint256, int8..int256, tuples and arrays of them.',
      );
    }
  }
  const indexedCount = abi.inputs.filter(isIndexed).length;
  if (indexedCount > 3) {
    throw new InvalidSignatureError(
      sig,
      `${indexedCount} parameters are marked indexed (at most 3 can be)`,
      'A log has at most 4 topics: topic0 and up to 3 indexed parameters. Remove the extra `indexed` markers.',
    );
  }
  return indexedCount;
}

function humanParam(param: AbiParameter): string {
  let type = param.type;
  if (type.startsWith('tuple')) {
    const components = (param as { components?: readonly AbiParameter[] }).components ?? [];
    type = `(${components.map(humanParam).join(', ')})${type.slice('tuple'.length)}`;
  }
  return [type, isIndexed(param) ? 'indexed' : '', param.name ?? ''].filter(Boolean).join(' ');
}
