// A parsed JSON body or config as the tests read it: each test asserts the fields it
// cares about against the documented API, so a static type per answer would only restate it.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed JSON, read field by field by the assertions
export type Json = any;
