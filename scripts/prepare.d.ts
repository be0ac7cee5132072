/** The types of scripts/prepare.js (plain JavaScript: npm runs it before any dependency is installed). */
export function prepareAction(root: string): 'build' | 'fresh' | 'no-sources' | 'no-dev-dependencies';
