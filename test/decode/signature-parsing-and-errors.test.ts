import { keccak256, toHex } from 'viem';
import { describe, expect, it } from 'vitest';
import { ExitCode, UserInputError } from '../../src/errors.js';
import { InvalidSignatureError, parseEventSignature } from '../../src/abi/event-signature.js';

function parseError(sig: string): InvalidSignatureError {
  try {
    parseEventSignature(sig);
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidSignatureError);
    expect(err).toBeInstanceOf(UserInputError);
    expect((err as InvalidSignatureError).exitCode).toBe(ExitCode.badInput);
    expect((err as InvalidSignatureError).details).toContain(JSON.stringify(sig));
    return err as InvalidSignatureError;
  }
  throw new Error(`expected ${sig} to be rejected`);
}

describe('parseEventSignature', () => {
  it('parses a human-readable signature into ABI, canonical form, topic0 and the form sent to the service', () => {
    const p = parseEventSignature('Transfer(address indexed from, address indexed to, uint256 value)');
    expect(p.name).toBe('Transfer');
    expect(p.canonical).toBe('Transfer(address,address,uint256)');
    expect(p.topic0).toBe(keccak256(toHex('Transfer(address,address,uint256)')));
    expect(p.hasIndexedMarkers).toBe(true);
    expect(p.human).toBe('Transfer(address indexed from, address indexed to, uint256 value)');
    expect(p.abi.inputs.map((i) => [i.name, i.type, i.indexed])).toEqual([
      ['from', 'address', true],
      ['to', 'address', true],
      ['value', 'uint256', undefined],
    ]);
  });

  it('accepts the `event` keyword, a trailing semicolon, no names and no indexed markers', () => {
    const a = parseEventSignature('  event Transfer(address indexed from, address indexed to, uint256 value);  ');
    const b = parseEventSignature('Transfer(address,address,uint256)');
    expect(a.topic0).toBe(b.topic0);
    expect(b.hasIndexedMarkers).toBe(false);
    expect(b.human).toBe('Transfer(address, address, uint256)');
  });

  it('handles tuples and arrays: canonical types inline, names and markers kept in `human`', () => {
    const sig = 'Filled((address maker, uint128[] amounts) indexed order, bytes32[2] ids, (bool,(string s)) nested)';
    const p = parseEventSignature(sig);
    expect(p.canonical).toBe('Filled((address,uint128[]),bytes32[2],(bool,(string)))');
    expect(p.topic0).toBe(keccak256(toHex(p.canonical)));
    expect(p.human).toBe('Filled((address maker, uint128[] amounts) indexed order, bytes32[2] ids, (bool, (string s)) nested)');
    // `human` parses back to the same event.
    expect(parseEventSignature(p.human).abi).toEqual(p.abi);
  });

  it('rejects a bare topic0 hash with a hint to write the signature', () => {
    const err = parseError(keccak256(toHex('Transfer(address,address,uint256)')));
    expect(err.shortMessage).toContain('topic0 hash');
    expect(err.hint).toContain('Transfer(address indexed from');
  });

  it.each([
    ['Transfer(address indexed from, address indexed to, uint value)', 'uint', 'uint256'],
    ['Foo(int x)', 'int', 'int256'],
    ['Foo(uint[] xs)', 'uint', 'uint256'],
    ['Foo((uint a, bool b) t)', 'uint', 'uint256'],
    ['Foo(byte b)', 'byte', 'bytes1'],
  ])('rejects the non-canonical type in %s with the canonical spelling', (sig, alias, canonical) => {
    const err = parseError(sig);
    expect(err.shortMessage).toContain(`"${alias}" is not canonical`);
    expect(err.hint).toContain(`Write ${canonical} instead of ${alias}`);
  });

  it('does not mistake names that contain type words for types', () => {
    expect(parseEventSignature('Minted(uint256 mint, address integer_owner)').canonical).toBe('Minted(uint256,address)');
  });

  it('rejects a function, an error and an anonymous event with what to do instead', () => {
    expect(parseError('function transfer(address to, uint256 amount)').shortMessage).toContain('function, not an event');
    expect(parseError('function transfer(address to, uint256 amount)').hint).toContain('wallet transactions');
    expect(parseError('error Unauthorized(address who)').shortMessage).toContain('error, not an event');
    expect(parseError('event Log(bytes32 indexed a) anonymous').shortMessage).toContain('anonymous');
  });

  it('rejects syntax errors, unknown types, keywords as names, too many indexed params and empty input', () => {
    expect(parseError('Transfer(address from').shortMessage).toContain('does not parse');
    expect(parseError('Transfer(addresss from)').shortMessage).toContain('does not parse');
    expect(parseError('Foo(Bar x)').hint).toContain('tuples are written inline');
    expect(parseError('Foo(bool partial)').shortMessage).toContain('protected Solidity keyword');
    expect(parseError('Foo(uint8 indexed a, uint8 indexed b, uint8 indexed c, uint8 indexed d)').shortMessage).toContain(
      '4 parameters are marked indexed',
    );
    expect(parseError('   ').shortMessage).toContain('empty');
  });
});
