import { toJsonSchema } from '@valibot/to-json-schema';
import type { StepBuild } from '../contracts/generation.js';
import type { StepDefinition } from './step.js';

/** What a step pipeline reads: a code's definition. */
export interface StepLookup {
  get(code: string): StepDefinition | undefined;
}

export interface StepCatalogEntry {
  code: string;
  summary: string;
  settingsSchema: unknown;
  /** Package steps only: where the step comes from. */
  package?: string;
  version?: string;
}

/** Reads and imports the packages again (load-packages.ts): what reload() calls. */
export type PackageLoader = () => Promise<readonly StepDefinition[]>;

/**
 * Every step a process knows: the built-ins (a constant list) and the steps of worker.json's
 * packages, with worker.json `steps.tenants`. The supervisor builds one at start and passes
 * it to the compiler, admin, explain and the docs; each worker builds its own at init for
 * its runtime. No module reads a registry of its own.
 */
export class StepRegistry implements StepLookup {
  private packages: ReadonlyMap<string, StepDefinition>;
  /** Changes whenever the package steps do: the compiler's cached parts are keyed by it. */
  fingerprint: string;

  constructor(
    private readonly builtins: ReadonlyMap<string, StepDefinition>,
    packages: readonly StepDefinition[] = [],
    /** worker.json `steps.tenants`: code -> tenants (or `*`) that may use that package step. */
    private readonly tenants: Readonly<Record<string, readonly string[]>> = {},
    private readonly loader: PackageLoader | null = null,
  ) {
    this.packages = this.checked(packages);
    this.fingerprint = fingerprintOf(this.packages);
  }

  get(code: string): StepDefinition | undefined {
    return this.builtins.get(code) ?? this.packages.get(code);
  }

  has(code: string): boolean {
    return this.get(code) !== undefined;
  }

  /** Built-ins first, then package steps, each by code. */
  all(): StepDefinition[] {
    const byCode = (a: StepDefinition, b: StepDefinition) => a.code.localeCompare(b.code);
    return [...[...this.builtins.values()].sort(byCode), ...[...this.packages.values()].sort(byCode)];
  }

  packageSteps(): StepDefinition[] {
    return [...this.packages.values()].sort((a, b) => a.code.localeCompare(b.code));
  }

  /**
   * Whether `tenant` may use `code`: every built-in; a package step when worker.json
   * `steps.tenants` lists the tenant (or `*`) for it, and only `default` when it is not listed.
   */
  usableBy(code: string, tenant: string): boolean {
    if (!this.packages.has(code)) return true;
    const list = this.tenants[code];
    return list === undefined ? tenant === 'default' : list.includes('*') || list.includes(tenant);
  }

  /** worker.json `steps.tenants` for a package step's code; undefined: not listed (the `default` tenant only). */
  tenantsOf(code: string): readonly string[] | undefined {
    return this.tenants[code];
  }

  /** The steps (those `tenant` may use, when given) with their settings as JSON Schema: plugin list, sys/steps, the console. */
  catalog(tenant?: string): StepCatalogEntry[] {
    return this.all()
      .filter((s) => tenant === undefined || this.usableBy(s.code, tenant))
      .map((s) => ({
        code: s.code,
        summary: s.summary,
        settingsSchema: toJsonSchema(s.schema, { errorMode: 'ignore' }),
        ...(s.origin ? { package: s.origin.package, version: s.origin.version } : {}),
      }));
  }

  /** The builds of the package steps among `codes`, for a generation's stamp (absent: none). */
  buildsOf(codes: Iterable<string>): Record<string, StepBuild> | undefined {
    const out: Record<string, StepBuild> = {};
    for (const code of codes) {
      const origin = this.packages.get(code)?.origin;
      if (origin) out[code] = origin;
    }
    return Object.keys(out).length ? out : undefined;
  }

  /**
   * This registry as a generation stamped with `builds` sees it: a step whose build here
   * differs (or is missing) throws when a route asks for it, naming both builds. The
   * runtime then refuses the generation (publish: nack) or that route (boot: 503).
   */
  forBuilds(builds: Readonly<Record<string, StepBuild>> | undefined): StepLookup {
    const refused = new Map<string, string>();
    for (const [code, want] of Object.entries(builds ?? {})) {
      const have = this.packages.get(code)?.origin;
      if (have && have.package === want.package && have.version === want.version && have.hash === want.hash) continue;
      refused.set(code, `step ${code}: the generation was compiled with ${showBuild(want)}, this worker loaded ${have ? showBuild(have) : 'no such package step'}`);
    }
    if (refused.size === 0) return this;
    return {
      get: (code) => {
        const why = refused.get(code);
        if (why !== undefined) throw new Error(why);
        return this.get(code);
      },
    };
  }

  /**
   * The packages read and imported again (a `workers restart`), as a registry of their own:
   * this one is left as it was until `adopt`. Throws what loading throws.
   */
  async reloaded(): Promise<StepRegistry> {
    if (this.loader === null) return this;
    return new StepRegistry(this.builtins, await this.loader(), this.tenants, this.loader);
  }

  /** Takes `other`'s package steps (what `reloaded` read), in place: whoever holds this registry sees them. */
  adopt(other: StepRegistry): void {
    if (this.loader === null) throw new Error('a registry without packages to read again takes no others'); // BUILTINS never changes
    this.packages = other.packages;
    this.fingerprint = other.fingerprint;
  }

  /** Reads and imports the packages again and takes them; on failure nothing changes. */
  async reload(): Promise<void> {
    this.adopt(await this.reloaded());
  }

  private checked(packages: readonly StepDefinition[]): ReadonlyMap<string, StepDefinition> {
    const out = new Map<string, StepDefinition>();
    for (const s of packages) {
      const from = s.origin ? `package ${s.origin.package}` : 'a package';
      if (this.builtins.has(s.code)) throw new StepPackageError(`step ${s.code} of ${from} has the code of a built-in step`);
      const other = out.get(s.code);
      if (other) throw new StepPackageError(`step ${s.code} of ${from} has the code of a step of package ${other.origin?.package}`);
      out.set(s.code, s);
    }
    return out;
  }
}

/** A step package that cannot be used: the start stops (exit 10), `validate` reports it. */
export class StepPackageError extends Error {}

export const showBuild = (b: StepBuild): string => `${b.package}@${b.version} (${b.hash.slice(0, 12)})`;

function fingerprintOf(packages: ReadonlyMap<string, StepDefinition>): string {
  return [...packages.values()].map((s) => `${s.code}=${s.origin?.hash ?? ''}`).sort().join(',');
}
