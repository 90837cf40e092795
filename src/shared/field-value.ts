/**
 * RFC 9110 §5.5 field-value, as undici and Node accept it: tab, printable ASCII and
 * obs-text; no CR, LF, NUL or other control character. One definition for the schemas
 * that take configured header values and the steps that copy values from services.
 */
export const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

export function isFieldValue(value: string): boolean {
  return FIELD_VALUE.test(value);
}
