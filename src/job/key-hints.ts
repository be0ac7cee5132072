import type { FieldPath } from '../yaml-file/yaml-doc.js';

/**
 * Keys written on a target that belong elsewhere in it: a contract target's tables are its
 * events' (each event is then {signature, tables}).
 */
export function targetKeyHint(path: FieldPath, key: string, value: unknown): string | undefined {
  const onTarget = path.length === 2 && path[0] === 'targets' && typeof path[1] === 'number';
  if (!onTarget || key !== 'tables' || value === null || typeof value !== 'object' || !('contract' in value)) return undefined;
  return 'a contract target names tables per event: events: [{signature: "Transfer(address indexed from, address indexed to, uint256 value)", tables: {events: transfers}}]';
}
