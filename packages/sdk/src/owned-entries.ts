/**
 * What plugins register into a shared per-harness service (text masks, walk
 * exclusions, protected files): entries tagged with their owner, in registration
 * order, each removed by the disposer `add` returned (and only that one).
 */
export interface OwnedEntry<T> {
  readonly owner: string;
  readonly value: T;
}

export class OwnedEntries<T> {
  private readonly list: OwnedEntry<T>[] = [];

  /** Registers `values` for `owner`; the returned function removes exactly these. */
  add(owner: string, ...values: T[]): () => void {
    const added = values.map((value) => ({ owner, value }));
    this.list.push(...added);
    return () => {
      for (const item of added) {
        const at = this.list.indexOf(item);
        if (at >= 0) this.list.splice(at, 1);
      }
    };
  }

  get size(): number {
    return this.list.length;
  }

  [Symbol.iterator](): Iterator<OwnedEntry<T>> {
    return this.list[Symbol.iterator]();
  }
}
