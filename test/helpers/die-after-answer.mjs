// Loaded into a gateway with NODE_OPTIONS=--import: the process SIGKILLs itself the moment
// a 2xx answer to an admin `config set` has been handed to the kernel — the crash a kill -9
// can land on by chance, made certain. Test-only; the gateway's code knows nothing of it.
import { ServerResponse } from 'node:http';

const end = ServerResponse.prototype.end;
ServerResponse.prototype.end = function (...args) {
  const out = end.apply(this, args);
  if (this.statusCode >= 200 && this.statusCode < 300 && /\/config\/set\//.test(this.req?.url ?? '')) process.kill(process.pid, 'SIGKILL');
  return out;
};
