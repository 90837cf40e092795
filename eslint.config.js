// The linter run by .ci/run before the tests: typescript-eslint's recommended rules.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import comments from '@eslint-community/eslint-plugin-eslint-comments/configs';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench/node_modules/**', 'console/dist/**', 'test-artifacts/**', 'examples/**/dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  comments.recommended,
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      // A rule switched off in place says why, after `--`.
      '@eslint-community/eslint-comments/require-description': ['error', { ignore: [] }],
      // A leading underscore marks a value left out on purpose (`const { token: _t, ...rest } = k`).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
);
