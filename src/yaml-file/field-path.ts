/** A field's path in a file (`targets[0].wallet`), and a place in it. */

export type FieldPath = readonly (string | number)[];

export interface Position {
  line: number;
  column: number;
}

/** `targets[0].wallet` */
export function formatFieldPath(path: FieldPath): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}
