import { readFile } from 'node:fs/promises';
import { parseAbi, type Abi, type AbiParameter } from 'viem';
import { UserInputError, errorMessage } from '../errors.js';
import { isSupportedType } from '../abi/abi-types.js';

export class AbiFileError extends UserInputError {
  override name = 'AbiFileError';
  constructor(path: string, problem: string, hint: string, cause?: unknown) {
    super(`Invalid ABI file: ${problem}`, { details: `file: ${path}`, hint, cause });
  }
}

const SHAPE_HINT =
  'Give a JSON ABI array, a compiler artifact with an "abi" field (Hardhat, Foundry, Truffle), or an array of human-readable signatures.';
const ITEM_TYPES = new Set(['function', 'event', 'error', 'constructor', 'fallback', 'receive']);

/** Line and column of a character offset, for JSON syntax errors. */
function lineColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return `line ${line}, column ${column}`;
}

function jsonPosition(err: unknown, text: string): string {
  const message = errorMessage(err);
  const pos = /position (\d+)/.exec(message);
  if (pos) return `${lineColumn(text, Number(pos[1]))}: ${message}`;
  const lc = /line (\d+) column (\d+)/.exec(message);
  return lc ? `line ${lc[1]}, column ${lc[2]}: ${message}` : message;
}

/** Finds the ABI array inside whatever JSON the file holds. */
function extractAbi(json: unknown, path: string): unknown[] {
  if (Array.isArray(json)) return json;
  if (typeof json === 'object' && json !== null) {
    const obj = json as Record<string, unknown>;
    // Hardhat / Foundry / Truffle artifacts: {abi}; solc metadata / standard JSON: {output: {abi}}.
    const candidate =
      obj.abi ?? (typeof obj.output === 'object' && obj.output !== null ? (obj.output as Record<string, unknown>).abi : undefined);
    if (Array.isArray(candidate)) return candidate;
    if (typeof candidate === 'string') {
      try {
        const inner = JSON.parse(candidate) as unknown;
        if (Array.isArray(inner)) return inner;
      } catch (err) {
        throw new AbiFileError(path, `its "abi" string is not JSON (${errorMessage(err)})`, SHAPE_HINT, err);
      }
    }
    const keys = Object.keys(obj).slice(0, 8).join(', ');
    throw new AbiFileError(
      path,
      candidate === undefined ? `it is a JSON object without an "abi" field (keys: ${keys})` : 'its "abi" field is not an array',
      SHAPE_HINT,
    );
  }
  throw new AbiFileError(path, `it holds a JSON ${json === null ? 'null' : typeof json}, not an ABI`, SHAPE_HINT);
}

function checkParams(params: unknown, where: string, path: string): void {
  if (params === undefined) return;
  if (!Array.isArray(params)) throw new AbiFileError(path, `${where}: "inputs"/"outputs" is not an array`, SHAPE_HINT);
  params.forEach((param: unknown, i) => {
    const p = param as Partial<AbiParameter> | null;
    if (typeof p !== 'object' || p === null || typeof p.type !== 'string') {
      throw new AbiFileError(path, `${where}, parameter ${i}: no "type"`, SHAPE_HINT);
    }
    if (!isSupportedType(p as AbiParameter)) {
      throw new AbiFileError(
        path,
        `${where}, parameter ${i} (${p.name || 'unnamed'}): type "${p.type}" is not a canonical ABI type`,
        'ABI types must be canonical (uint256, not uint; tuples with "components"), as compilers emit them.',
      );
    }
  });
}

/** Checks the entries this tool uses (events and functions) and returns the ABI. */
function validate(entries: unknown[], path: string): Abi {
  if (entries.length > 0 && entries.every((e) => typeof e === 'string')) {
    try {
      return parseAbi(entries as string[]);
    } catch (err) {
      const e = err as { shortMessage?: string; details?: string };
      throw new AbiFileError(
        path,
        `a human-readable signature does not parse (${[e.shortMessage ?? errorMessage(err), e.details].filter(Boolean).join(' ')})`,
        'Write each entry in Solidity syntax, e.g. "event Transfer(address indexed from, address indexed to, uint256 value)".',
        err,
      );
    }
  }
  return entries.map((entry, i) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw new AbiFileError(path, `abi[${i}] is not an object`, SHAPE_HINT);
    }
    const item = { ...(entry as Record<string, unknown>) };
    // The Solidity ABI spec lets `type` default to "function".
    item.type ??= 'function';
    if (typeof item.type !== 'string' || !ITEM_TYPES.has(item.type)) {
      throw new AbiFileError(path, `abi[${i}] has unknown type ${JSON.stringify(item.type)}`, SHAPE_HINT);
    }
    if (item.type === 'event' || item.type === 'function' || item.type === 'error') {
      if (typeof item.name !== 'string' || item.name === '') {
        throw new AbiFileError(path, `abi[${i}] (${item.type}) has no name`, SHAPE_HINT);
      }
      const where = `abi[${i}] (${item.type} ${item.name})`;
      item.inputs ??= [];
      checkParams(item.inputs, where, path);
      if (item.type === 'function') {
        item.outputs ??= [];
        item.stateMutability ??= 'nonpayable';
      }
    }
    return item;
  }) as unknown as Abi;
}

/**
 * Reads an ABI from a file: a plain ABI array, an artifact object with `abi` (Hardhat, Foundry,
 * Truffle; also solc metadata `output.abi`), or an array of human-readable signatures.
 * Throws AbiFileError (exit code 2) naming the file and what is wrong.
 */
export async function loadAbiFile(path: string): Promise<Abi> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new AbiFileError(
      path,
      code === 'ENOENT' ? 'the file does not exist' : `the file cannot be read (${code ?? errorMessage(err)})`,
      'Check the path (relative paths are resolved from the working directory).',
      err,
    );
  }
  const body = text.replace(/^\uFEFF/, '');
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (err) {
    throw new AbiFileError(path, `it is not valid JSON (${jsonPosition(err, body)})`, SHAPE_HINT, err);
  }
  return validate(extractAbi(json, path), path);
}
