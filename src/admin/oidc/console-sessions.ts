import { createHash, randomBytes } from 'node:crypto';
import type { Identity } from '../identity.js';

interface Session {
  identity: Identity;
  expiresAt: number;
  /** Kept only when sign-out also ends the provider's session (its id_token_hint); never logged. */
  idToken: string | null;
}

/** Resolves a console session's cookie value to its identity (the auth gate's cookie path). */
export interface SessionResolver {
  resolveSession(id: string): Identity | null;
}

const digest = (id: string) => createHash('sha256').update(id, 'utf8').digest('base64url');

/**
 * Console sessions, in the supervisor's memory only: a session id is 32 random bytes the
 * browser holds in an HttpOnly cookie; here it is known by its SHA-256 alone, so a heap
 * dump reveals no usable cookie. Bounded: past `max`, a new session ends the oldest.
 * Sessions end with the process (operators sign in again after a restart).
 */
export class ConsoleSessions implements SessionResolver {
  /** digest -> session, in creation order (the oldest first). */
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly max: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** A new session; the answer is the id the cookie carries (shown nowhere else). */
  create(identity: Identity, expiresAt: number, idToken: string | null): string {
    this.sweep();
    while (this.sessions.size >= this.max) this.sessions.delete(this.sessions.keys().next().value!);
    const id = randomBytes(32).toString('base64url');
    this.sessions.set(digest(id), { identity, expiresAt, idToken });
    return id;
  }

  resolveSession(id: string): Identity | null {
    const key = digest(id);
    const s = this.sessions.get(key);
    if (s === undefined) return null;
    if (s.expiresAt <= this.now()) {
      this.sessions.delete(key);
      return null;
    }
    return s.identity;
  }

  /** Ends a session; its ID token (when kept) is the provider's logout hint. */
  end(id: string): { idToken: string | null } | null {
    const key = digest(id);
    const s = this.sessions.get(key);
    if (s === undefined) return null;
    this.sessions.delete(key);
    return { idToken: s.idToken };
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Expired sessions go when a new one is made: the map never holds more than `max`. */
  private sweep(): void {
    const now = this.now();
    for (const [key, s] of this.sessions) if (s.expiresAt <= now) this.sessions.delete(key);
  }
}
