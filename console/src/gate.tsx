import { createContext, useContext, type ButtonHTMLAttributes, type ReactElement, type ReactNode } from 'react';

/**
 * The one permission primitive. The server's answer (GET /api/v1/sys/console) says,
 * per feature, `enabled`, `disabled` or `hidden`; every gated control is wrapped in
 * <Gate feature="…"> and receives `disabled`. The console itself decides nothing.
 */
export type FeatureState = 'enabled' | 'disabled' | 'hidden';

export interface ConsoleModel {
  /** signedInAs: the person of a console session (admin.oidc), absent for a token. */
  identity: { kind: 'system' | 'tenant'; tenant: string | null; scopes: string[]; signedInAs?: string };
  tenant: string;
  tenantSelectable: boolean;
  nav: { id: string; label: string }[];
  features: Record<string, FeatureState>;
}

const ModelContext = createContext<ConsoleModel | null>(null);
export const ModelProvider = ModelContext.Provider;

export function useModel(): ConsoleModel {
  const m = useContext(ModelContext);
  if (!m) throw new Error('useModel outside ModelProvider');
  return m;
}

/**
 * A feature unknown to the server is hidden. Controls go through <Gate>; this hook is for
 * the reads a view makes only when the server's answer allows them (the designer's step
 * catalogue), never for a decision of the console's own.
 */
export function useFeature(feature: string): FeatureState {
  return useModel().features[feature] ?? 'hidden';
}

export function Gate({ feature, children }: { feature: string; children: (disabled: boolean) => ReactNode }): ReactElement | null {
  const state = useFeature(feature);
  if (state === 'hidden') return null;
  return <>{children(state === 'disabled')}</>;
}

/** The common case: a button that the server's answer disables or hides. `disabled` adds the view's own reasons. */
export function GatedButton({ feature, disabled, children, ...rest }: { feature: string } & ButtonHTMLAttributes<HTMLButtonElement>): ReactElement | null {
  return (
    <Gate feature={feature}>
      {(off) => (
        <button type="button" {...rest} disabled={off || disabled}>
          {children}
        </button>
      )}
    </Gate>
  );
}
