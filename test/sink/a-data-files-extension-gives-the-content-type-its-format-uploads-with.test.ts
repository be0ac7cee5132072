/**
 * Compaction uploads merged files it knows only by their extension: the content type it sends must
 * be the one an export of that format and compression sends (one rule, src/sink/formats.ts).
 */
import { describe, expect, it } from 'vitest';
import { contentType, contentTypeOfExtension, FORMAT_RULES, OUTPUT_FORMATS } from '../../src/sink/formats.js';

describe('a data file extension', () => {
  it('gives the content type its format and compression upload with', () => {
    const pairs = OUTPUT_FORMATS.flatMap((format) => FORMAT_RULES[format].compressions.map((compression) => ({ format, compression })));
    expect(pairs.length).toBeGreaterThan(3);
    for (const { format, compression } of pairs) {
      expect(contentTypeOfExtension(FORMAT_RULES[format].extension(compression)), `${format} ${compression}`).toBe(
        contentType(format, compression),
      );
    }
  });

  it('that no format writes has none', () => {
    expect(contentTypeOfExtension('.csv')).toBeUndefined();
  });
});
