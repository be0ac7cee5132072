import { inspect } from 'node:util';

const REDACTED = '[redacted]';

/**
 * A secret value (API key) that does not leak by accident: JSON.stringify, String(), template
 * strings, console.log / util.inspect and pino all see "[redacted]". The value lives in a private
 * field (not enumerable, not visible to Object.keys or structured logging); `reveal()` is the
 * only way out and belongs right where the HTTP header is set.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toJSON(): string {
    return REDACTED;
  }

  toString(): string {
    return REDACTED;
  }

  [Symbol.toPrimitive](): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return REDACTED;
  }
}
