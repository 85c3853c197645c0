/** Short random ids for runs, turns and entries: unique enough per session, cheap to make. */
import { randomBytes } from "node:crypto";

let pool = Buffer.alloc(0);
let offset = 0;

/** 8 hex characters. Draws from a pooled random buffer so ids cost no syscall each. */
export function shortId(): string {
  if (offset + 4 > pool.length) {
    pool = randomBytes(4096);
    offset = 0;
  }
  const id = pool.toString("hex", offset, offset + 4);
  offset += 4;
  return id;
}
