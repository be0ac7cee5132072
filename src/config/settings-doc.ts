/**
 * The settings table as Markdown, for docs/settings.md (`npx tsx src/config/settings-doc.ts`;
 * a test fails when the doc's copy differs).
 */
import { fileURLToPath } from 'node:url';
import { SETTING_LIST } from '../settings/settings.js';

export const SETTINGS_DOC_START = '<!-- settings -->';
export const SETTINGS_DOC_END = '<!-- /settings -->';

const PLACE_NAMES = { config: 'config', env: 'env', job: 'job', flag: 'flag' } as const;

export function renderSettingsDoc(): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  const rows = SETTING_LIST.map((s) =>
    [
      `\`${s.fileKey ?? s.key}\``,
      s.flag ? `\`--${s.flag.name}\`${s.flag.alias ? ` (\`-${s.flag.alias}\`)` : ''}` : '',
      (s.env ?? []).map((e) => `\`${e}\``).join(', '),
      s.defaultText ? cell(s.defaultText) : '',
      s.places.map((p) => PLACE_NAMES[p]).join(', '),
      cell(s.doc),
    ].join(' | '),
  );
  return [
    SETTINGS_DOC_START,
    '| setting | flag | environment | default | set in | what it does |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r} |`),
    SETTINGS_DOC_END,
  ].join('\n');
}

/** The doc's text with its settings table replaced by the current one. */
export function withSettingsDoc(readme: string): string {
  const start = readme.indexOf(SETTINGS_DOC_START);
  const end = readme.indexOf(SETTINGS_DOC_END);
  if (start < 0 || end < start) throw new Error(`docs/settings.md has no ${SETTINGS_DOC_START} ... ${SETTINGS_DOC_END} block`);
  return readme.slice(0, start) + renderSettingsDoc() + readme.slice(end + SETTINGS_DOC_END.length);
}

/** `npx tsx src/config/settings-doc.ts [--check]`: rewrites (or checks) docs/settings.md's settings table. */
async function main(): Promise<void> {
  const { readFile, writeFile } = await import('node:fs/promises');
  const path = await import('node:path');
  const readme = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/settings.md');
  const text = await readFile(readme, 'utf8');
  const next = withSettingsDoc(text);
  if (process.argv.includes('--check')) {
    if (next !== text) {
      process.stderr.write('docs/settings.md settings table is out of date: run npx tsx src/config/settings-doc.ts\n');
      process.exitCode = 1;
    }
  } else if (next !== text) {
    await writeFile(readme, next);
    process.stdout.write('docs/settings.md settings table rewritten\n');
  }
}

if (process.argv[1] && process.argv[1] === fileURLToPath(import.meta.url)) await main();
