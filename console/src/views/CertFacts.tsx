import type { CertDocView } from '../api';
import { when } from '../components';

const DAY = 86_400_000;
/** The dry-run warns of a certificate expiring within this many days (Compile.Cert.Expiring): the console marks it the same. */
const EXPIRING_DAYS = 30;

/** notAfter with the days left, in red under 30 days or once expired. */
export function Expiry({ notAfter, testId }: { notAfter: string; testId?: string }) {
  const left = Date.parse(notAfter) - Date.now();
  const days = Math.floor(Math.abs(left) / DAY);
  const plural = (n: number) => `${n} day${n === 1 ? '' : 's'}`;
  const text = left < 0 ? `expired ${days === 0 ? 'today' : `${plural(days)} ago`}` : `expires in ${plural(days)}`;
  return (
    <span className={left < EXPIRING_DAYS * DAY ? 'expiring' : undefined} data-testid={testId}>
      {when(notAfter)} ({text})
    </span>
  );
}

/** The hosts a certificate serves: its `hosts`, else its DNS names. */
export const servedHosts = (doc: CertDocView | null | undefined): string[] => doc?.hosts ?? doc?.info?.dnsNames ?? [];

/** One version (draft or published) of a certificate: what the certificate says. The key is never among it. */
export function CertFacts({ title, doc, testId }: { title: string; doc: CertDocView; testId: string }) {
  const i = doc.info;
  return (
    <div data-testid={testId}>
      <h3>{title}</h3>
      {!i ? (
        <p className="hint">The certificate could not be read: a dry-run says why.</p>
      ) : (
        <dl className="facts">
          <dt>Subject</dt>
          <dd data-testid="cert-subject">{i.subject}</dd>
          <dt>DNS names</dt>
          <dd data-testid="cert-dns">{i.dnsNames.join(', ') || '—'}</dd>
          <dt>Hosts served</dt>
          <dd data-testid="cert-hosts-served">
            {servedHosts(doc).join(', ') || '—'}
            {doc.hosts ? '' : ' (its DNS names)'}
          </dd>
          <dt>Issuer</dt>
          <dd data-testid="cert-issuer">{i.issuer}</dd>
          <dt>Not before</dt>
          <dd data-testid="cert-not-before">{when(i.notBefore)}</dd>
          <dt>Not after</dt>
          <dd>
            <Expiry notAfter={i.notAfter} testId="cert-expiry" />
          </dd>
          <dt>SHA-256 fingerprint</dt>
          <dd>
            <code data-testid="cert-fingerprint">{i.fingerprint256}</code>
          </dd>
          <dt>Key type</dt>
          <dd data-testid="cert-key-type">{i.keyType}</dd>
          <dt>Default</dt>
          <dd data-testid="cert-default">{doc.default ? 'yes: answers a handshake for a name no certificate serves' : 'no'}</dd>
          <dt>Private key</dt>
          <dd>write-only: never shown</dd>
        </dl>
      )}
    </div>
  );
}
