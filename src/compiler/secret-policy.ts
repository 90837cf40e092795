import { ANY_SECRET, WILDCARD_TENANT, type SecretPolicy } from '../contracts/secrets.js';

/** Whether `tenant`'s steps may name the environment variable `name` under `policy`. */
export function mayName(policy: SecretPolicy, tenant: string, name: string): boolean {
  if (policy.reserved.includes(name)) return false;
  const listed = Object.hasOwn(policy.env, tenant) ? policy.env[tenant]! : [];
  return listed.includes(name) || (tenant === WILDCARD_TENANT && listed.includes(ANY_SECRET));
}
