// The probe lives in shared/ so the CLI and the supervisor, which may not import the worker, ask it too.
export { uwsSupport, type UwsSupport } from '../../shared/uws-support.js';
