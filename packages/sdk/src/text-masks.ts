/**
 * Text masks: a redaction plugin publishes its masking function here so text is
 * masked *before* anyone cuts it (grep's long-line cut, a denial reason, a
 * streaming update). `maskText` is the identity when no mask is registered.
 *
 * Invariant: masks run in registration order and a throwing mask withholds the
 * text (fail closed) instead of returning it unmasked.
 */
import { sharedService } from "./harness-services.js";
import { OwnedEntries } from "./owned-entries.js";

export type TextMask = (text: string) => string;

export interface TextMasks {
  add(owner: string, mask: TextMask): () => void;
  /** The text with every registered mask applied. */
  mask(text: string): string;
  readonly size: number;
}

const KEY = Symbol("rein.text-masks");

function createTextMasks(): TextMasks {
  const list = new OwnedEntries<TextMask>();
  return {
    add: (owner, mask) => list.add(owner, mask),
    mask(text) {
      let out = text;
      for (const { owner, value: mask } of list) {
        try {
          out = mask(out);
        } catch (error) {
          return `[text withheld: mask of ${owner} failed: ${error instanceof Error ? error.message : String(error)}]`;
        }
      }
      return out;
    },
    get size() {
      return list.size;
    },
  };
}

/** The text masks of the harness `owner` (a plugin's `rein`, or a harness) belongs to. */
export function textMasks(owner: object): TextMasks {
  return sharedService(owner, KEY, createTextMasks);
}
