import { RE2JS } from 're2js';

/** Longest pattern source a step setting may carry. */
export const MAX_PATTERN_CHARS = 1000;
/** Largest compiled RE2 program (a pattern, a step's pattern list): matching costs up to input length times this. */
export const MAX_PROGRAM_SIZE = 2000;

export interface PatternOptions {
  /** Case-insensitive, as the JavaScript `i` flag. */
  ignoreCase?: boolean;
  /** Parse as the JavaScript `u` flag does (JSON Schema patterns). */
  unicode?: boolean;
}

/** A pattern the linear-time engine cannot or will not run; the message completes "pattern ...". */
export class PatternRefused extends Error {}

// JavaScript's `.` excludes every line terminator; RE2's excludes only `\n`.
const DOT = '[^\\n\\r\\x{2028}\\x{2029}]';

// JavaScript's `\s` (and its complement, for use inside a class); RE2's is ASCII `[\t\n\f\r ]`.
const SPACE = '\\t\\n\\x0b\\f\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}';
const NON_SPACE =
  '\\x00-\\x08\\x0e-\\x1f\\x21-\\x{9f}\\x{a1}-\\x{167f}\\x{1681}-\\x{1fff}\\x{200b}-\\x{2027}\\x{202a}-\\x{202e}\\x{2030}-\\x{205e}\\x{2060}-\\x{2fff}\\x{3001}-\\x{fefe}\\x{ff00}-\\x{10ffff}';

/** Letter escapes that mean the same in JavaScript and RE2 (`\s`, `\u`, `\c`, `\p{…}` are translated above). */
const SAME_LETTER_ESCAPES = 'dDwWbBnrtfvx';

const unsupported = (feature: string) => new PatternRefused(`uses a feature RE2 does not support: ${feature}`);

/**
 * Rewrites a JavaScript pattern into RE2 syntax with the same meaning, or throws
 * PatternRefused naming a feature that needs backtracking (backreferences, lookaround,
 * atomic groups, possessive quantifiers). Without `captures`, every group becomes
 * non-capturing.
 */
export function toRe2Syntax(src: string, captures = true): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === '\\') {
      const n = src[i + 1] ?? '';
      if (!inClass && n >= '1' && n <= '9') throw unsupported(`backreference \`\\${n}\``);
      if (n === 'k' && src[i + 2] === '<') throw unsupported('named backreference `\\k<…>`');
      if ((n === 'p' || n === 'P') && src[i + 2] === '{') {
        // a Unicode property: its braces are not a repeat count
        const end = src.indexOf('}', i);
        if (end > 0) {
          out += src.slice(i, end + 1);
          i = end;
          continue;
        }
      }
      const braced = n === 'u' ? /^\{([0-9A-Fa-f]+)\}/.exec(src.slice(i + 2)) : null;
      const hex4 = n === 'u' && !braced ? /^[0-9A-Fa-f]{4}/.exec(src.slice(i + 2)) : null;
      const ctrl = n === 'c' && /^[A-Za-z]/.test(src[i + 2] ?? '') ? src.charCodeAt(i + 2) % 32 : -1;
      if (n === 's' || n === 'S') {
        const set = n === 's' ? SPACE : NON_SPACE;
        out += inClass ? set : `[${set}]`;
        i++;
      } else if (braced) {
        out += `\\x{${braced[1]}}`;
        i += 1 + braced[0].length;
      } else if (hex4) {
        out += `\\x{${hex4[0]}}`;
        i += 5;
      } else if (ctrl >= 0) {
        out += `\\x{${ctrl.toString(16)}}`;
        i += 2;
      } else if (/[A-Za-z]/.test(n) && !SAME_LETTER_ESCAPES.includes(n)) {
        // JavaScript reads `\A`, `\a`, `\Q`, `\pN` as the letter; RE2 as an anchor, a bell, a quote, a class.
        throw new PatternRefused(`uses the escape \`\\${n}\`, which RE2 reads differently from JavaScript: write ${n} without the backslash`);
      } else {
        out += c + n;
        i++;
      }
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      // `[` is literal inside a JavaScript class; RE2 would read `[:` as a POSIX class.
      out += c === '[' ? '\\[' : c;
      continue;
    }
    if (c === '[') {
      if (src.startsWith('[]', i)) {
        out += '[^\\x00-\\x{10FFFF}]'; // matches nothing, as in JavaScript
        i += 1;
      } else if (src.startsWith('[^]', i)) {
        out += '[\\x00-\\x{10FFFF}]'; // matches anything
        i += 2;
      } else {
        inClass = true;
        out += c;
        // a `]` first in a JavaScript class closes it (handled above); in RE2 it would be literal
      }
      continue;
    }
    if (c === '(' && src[i + 1] === '?') {
      const kind = src.slice(i + 2, i + 4);
      if (kind.startsWith('=')) throw unsupported('lookahead `(?=`');
      if (kind.startsWith('!')) throw unsupported('negative lookahead `(?!`');
      if (kind === '<=') throw unsupported('lookbehind `(?<=`');
      if (kind === '<!') throw unsupported('negative lookbehind `(?<!`');
      if (kind.startsWith('>')) throw unsupported('atomic group `(?>`');
      const end = src.indexOf('>', i);
      if (!captures && kind.startsWith('<') && end > 0) {
        // a named group: drop its name (patterns joined into one may share names)
        out += '(?:';
        i = end;
        continue;
      }
    } else if (c === '(' && !captures) {
      out += '(?:';
      continue;
    }
    const quantifier = c === '*' || c === '+' || (c === '?' && src[i - 1] !== '(') || (c === '}' && /\{\d+(,\d*)?$/.test(src.slice(0, i)));
    if (quantifier && src[i + 1] === '+') {
      throw unsupported(`possessive quantifier \`${c}+\``);
    }
    out += c === '.' ? DOT : c;
  }
  return out;
}

/**
 * Compiles an operator's pattern (JavaScript syntax) for RE2's linear-time engine, once
 * per generation; throws PatternRefused with a message for the compile issue.
 */
export function compileLinear(src: string, opts: PatternOptions = {}): RE2JS {
  if (src.length > MAX_PATTERN_CHARS) throw new PatternRefused(`is longer than ${MAX_PATTERN_CHARS} characters`);
  const re2 = toRe2Syntax(src);
  try {
    new RegExp(src, (opts.ignoreCase ? 'i' : '') + (opts.unicode ? 'u' : ''));
  } catch (err) {
    throw new PatternRefused(`is not a valid regular expression: ${(err as Error).message}`);
  }
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(re2, opts.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (err) {
    throw new PatternRefused(`is not supported by RE2: ${(err as Error).message.replace(/^error parsing regexp: /, '')}`);
  }
  const size = compiled.programSize();
  if (size > MAX_PROGRAM_SIZE) throw new PatternRefused(`is too large: it compiles to ${size} RE2 instructions (at most ${MAX_PROGRAM_SIZE})`);
  return compiled;
}

/**
 * One program that matches where any of the patterns does (each already accepted by
 * compileLinear), for a boolean test in one pass; null for no patterns.
 */
export function compileAnyOf(sources: readonly string[], opts: PatternOptions = {}): RE2JS | null {
  if (sources.length === 0) return null;
  const joined = sources.map((src) => `(?:${toRe2Syntax(src, false)})`).join('|');
  const compiled = RE2JS.compile(joined, opts.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  // Matching costs the input's length times the program's size: the list as a whole has the one pattern's budget.
  const size = compiled.programSize();
  if (size > MAX_PROGRAM_SIZE) throw new PatternRefused(`list is too large: its patterns together compile to ${size} RE2 instructions (at most ${MAX_PROGRAM_SIZE})`);
  return compiled;
}

/** Why a pattern is refused, or undefined when it compiles: for a schema's check message. */
export function patternIssue(src: string, opts: PatternOptions = {}): string | undefined {
  try {
    compileLinear(src, opts);
    return undefined;
  } catch (err) {
    if (err instanceof PatternRefused) return err.message;
    throw err;
  }
}
