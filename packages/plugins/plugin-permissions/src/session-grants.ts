/**
 * Session grants ("allow for this session"), per session: the grants recorded in
 * it as signed `custom` entries, read back on first use and whenever the session
 * grew since (a resumed session; entries appended by another writer, as `rein
 * replay` gives recorded grants back in order).
 *
 * Invariants: a grant counts only when its signature verifies for that session;
 * a child agent's asks are covered by its own session's grants, and by its
 * parent's only when the child's config says so (`inheritGrants`); a child's
 * grant never covers the parent.
 */
import type { HookContext, PermissionRequest, SessionEntry, SessionFacade } from "@rein/sdk";
import { covers, isGrant, type PermissionGrant, verify } from "./grants.js";

/** The session entry's `customType` for a session grant. */
export const GRANT_ENTRY_TYPE = "rein.permission-grant";

/** A grant entry read back from the session, and whether Rein wrote it. */
export interface StoredGrant {
  entryId: string;
  grant: PermissionGrant | undefined;
  problem?: string;
}

/** The grant entries recorded in a session (every branch: a grant is for the whole session), checked. */
export function grantsFrom(entries: readonly SessionEntry[], key: Buffer, sessionId: string): StoredGrant[] {
  const found: StoredGrant[] = [];
  for (const entry of entries) {
    if (entry.type !== "custom" || entry.customType !== GRANT_ENTRY_TYPE) continue;
    const data = entry.data;
    if (!isGrant(data)) found.push({ entryId: entry.id, grant: undefined, problem: "it is malformed" });
    else if (!verify(key, data, sessionId)) {
      found.push({
        entryId: entry.id,
        grant: undefined,
        problem: "its signature is missing or wrong (not written by Rein)",
      });
    } else found.push({ entryId: entry.id, grant: data });
  }
  return found;
}

/** What the ledger needs from the plugin: the grant key (read on first use) and a warning channel. */
export interface SessionGrantsPort {
  grantKey(): Buffer;
  warn(message: string): void;
}

interface Ledger {
  scanned: number;
  grants: PermissionGrant[];
}

export class SessionGrants {
  readonly #ledgers = new Map<string, Ledger>();

  constructor(
    private readonly port: SessionGrantsPort,
    /** The plugin's own (root) session: a child that inherits grants reads it afresh. */
    private readonly rootSession: SessionFacade,
  ) {}

  /** Reads the grants appended to `session` since the last look; returns how many were new. */
  restore(session: SessionFacade): number {
    const ledger = this.#ledgerOf(session.id);
    const entries = session.entries();
    if (entries.length === ledger.scanned) return 0;
    const fresh = entries.slice(ledger.scanned);
    ledger.scanned = entries.length;
    if (!fresh.some((e) => e.type === "custom" && e.customType === GRANT_ENTRY_TYPE)) return 0;
    let restored = 0;
    for (const item of grantsFrom(fresh, this.port.grantKey(), session.id)) {
      if (!item.grant)
        this.port.warn(`ignored the permission grant in session entry ${item.entryId}: ${item.problem}`);
      else if (!ledger.grants.some((g) => g.mac === item.grant?.mac)) {
        ledger.grants.push(item.grant);
        restored++;
      }
    }
    return restored;
  }

  /** The session grant that covers this request in its own session (or its parent's, when inherited). */
  coveredBy(request: PermissionRequest, context: HookContext): PermissionGrant | undefined {
    this.restore(context.session);
    const found = this.#ledgerOf(context.session.id).grants.find((g) =>
      covers(g, request.call, request.verdict.by),
    );
    if (found || context.agent?.inheritGrants !== true) return found;
    const parentId = context.agent.parentSessionId;
    if (parentId === this.rootSession.id) this.restore(this.rootSession);
    return this.#ledgers.get(parentId)?.grants.find((g) => covers(g, request.call, request.verdict.by));
  }

  /** Records a grant just given at the prompt: in the ledger and as a signed session entry. */
  record(session: SessionFacade, grant: PermissionGrant): void {
    this.#ledgerOf(session.id).grants.push(grant);
    session.append({ type: "custom", customType: GRANT_ENTRY_TYPE, data: grant });
  }

  #ledgerOf(sessionId: string): Ledger {
    let ledger = this.#ledgers.get(sessionId);
    if (!ledger) {
      ledger = { scanned: 0, grants: [] };
      this.#ledgers.set(sessionId, ledger);
    }
    return ledger;
  }
}
