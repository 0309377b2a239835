/**
 * What changed since the last commit, as precisely as the code that changed it said: a whole part (an
 * area, the accounts…), one account's records of a part, or single records. The store writes only the
 * rows named here; "everything" (a full reset, a change nobody located) rewrites every part.
 */

/** The records of one account that changed: all of them, or these ids. */
type AccountChanges = 'all' | Set<string>;
/** One part's changes: all of it, or by account (`null` for records of no account). */
type PartChanges = 'all' | Map<string | null, AccountChanges>;

export class Changes {
  private everything = false;
  private parts = new Map<string, PartChanges>();
  private quiet = new Map<string, Set<string>>();
  /** How many marks were made: a commit knows whether anything came in while it ran. */
  count = 0;

  /** Marks a change: everything (no part), a whole part, one account's records of it, or one record. */
  mark(part?: string, account?: string | null, id?: string): void {
    this.count += 1;
    if (part === undefined) {
      this.everything = true;
      return;
    }
    if (this.everything) return;
    const known = this.parts.get(part);
    if (known === 'all') return;
    if (account === undefined) {
      this.parts.set(part, 'all');
      return;
    }
    const byAccount = known ?? new Map<string | null, AccountChanges>();
    if (!known) this.parts.set(part, byAccount);
    const ids = byAccount.get(account);
    if (ids === 'all') return;
    if (id === undefined) byAccount.set(account, 'all');
    else if (ids) ids.add(id);
    else byAccount.set(account, new Set([id]));
  }

  /**
   * Notes a record that changed along with a marked change (an account charged, an id stream moved on):
   * written with the next commit, but not a reason for one.
   */
  note(part: string, id: string): void {
    const ids = this.quiet.get(part);
    if (ids) ids.add(id);
    else this.quiet.set(part, new Set([id]));
  }

  isEmpty(): boolean {
    return !this.everything && this.parts.size === 0;
  }

  /** Hands over what is marked and starts afresh (`restore` puts it back when the commit failed). */
  take(): TakenChanges {
    for (const [part, ids] of this.quiet) for (const id of ids) this.mark(part, null, id);
    const taken = { everything: this.everything, parts: this.parts };
    this.everything = false;
    this.parts = new Map();
    this.quiet = new Map();
    return taken;
  }

  /** Puts back changes a failed commit did not write, merged with those marked since. */
  restore(taken: TakenChanges): void {
    if (taken.everything) this.everything = true;
    for (const [part, changes] of taken.parts) {
      if (changes === 'all') this.mark(part);
      else
        for (const [account, ids] of changes) {
          if (ids === 'all') this.mark(part, account);
          else for (const id of ids) this.mark(part, account, id);
        }
    }
  }
}

export interface TakenChanges {
  everything: boolean;
  parts: Map<string, PartChanges>;
}
