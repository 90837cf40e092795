/**
 * Which environment variables a tenant's steps may name (jwt-auth `secretEnv`), from
 * worker.json `secrets.env`. Checked by the compiler before any trial build reads the
 * variable, so a refusal says nothing about whether it exists.
 */
export interface SecretPolicy {
  /** tenant -> names its steps may name; `*` in the default tenant's list: any name but `reserved`. */
  env: Readonly<Record<string, readonly string[]>>;
  /** Never nameable by any tenant: the admin keys' `tokenEnv` variables. */
  reserved: readonly string[];
}

export const NO_SECRETS: SecretPolicy = { env: {}, reserved: [] };

export const ANY_SECRET = '*';

/** The tenant that may list `*`: the operator's own. */
export const WILDCARD_TENANT = 'default';
