import type { Services } from '../services.js';
import { SvcError } from '../../shared/errors.js';
import { certKeyContext, openStored } from '../../shared/secret-box.js';
import { WRITE_ONLY } from '../cert-at-rest.js';
import type { StateEntity } from './state-document.js';
import type { CertDoc } from '../../compiler/documents.js';

/**
 * The file's entities made comparable with the stored ones: a cert key given as "(write-only)",
 * or as the PEM the store holds sealed, becomes the stored value, so it reads as unchanged.
 */
export function resolveKeys(services: Services, tenant: string, desired: readonly StateEntity[], current: readonly StateEntity[]): StateEntity[] {
  const stored = new Map(current.filter((e) => e.kind === 'cert').map((e) => [e.name, (e.doc as CertDoc).privateKey]));
  return desired.map((e) => {
    if (e.kind !== 'cert') return e;
    const given = (e.doc as CertDoc).privateKey;
    const have = stored.get(e.name);
    if (given === WRITE_ONLY) {
      if (have === undefined) {
        throw new SvcError('Svc.Config.Invalid', `cert ${e.name}: the file keeps the stored private key, and none is stored`, {
          errors: [{ path: `/certs/${e.name}/privateKey`, message: 'write-only in the file, and no key is stored for this cert: give the PEM key' }],
        });
      }
      return { ...e, doc: { ...e.doc, privateKey: have } };
    }
    let same = false;
    try {
      same = have !== undefined && openStored(have, certKeyContext(`${tenant}/${e.name}`), services.secretBox) === given;
    } catch {
      // a key sealed with another secrets.keyEnv: the file's key replaces it
    }
    return same ? { ...e, doc: { ...e.doc, privateKey: have } } : e;
  });
}

