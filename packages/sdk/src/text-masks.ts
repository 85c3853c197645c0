/**
 * Text masks: a redaction plugin publishes its masking function here so text is
 * masked *before* anyone cuts it (grep's long-line cut, a denial reason, a
 * streaming update). `maskText` is the identity when no mask is registered.
 *
 * Invariant: masks run in registration order and a throwing mask withholds the
 * text (fail closed) instead of returning it unmasked.
 */
import { sharedService } from "./harness-services.js";

export type TextMask = (text: string) => string;

export interface TextMasks {
  add(owner: string, mask: TextMask): () => void;
  /** The text with every registered mask applied. */
  mask(text: string): string;
  readonly size: number;
}

const KEY = Symbol("rein.text-masks");

function createTextMasks(): TextMasks {
  const list: { owner: string; mask: TextMask }[] = [];
  return {
    add(owner, mask) {
      const item = { owner, mask };
      list.push(item);
      return () => {
        const at = list.indexOf(item);
        if (at >= 0) list.splice(at, 1);
      };
    },
    mask(text) {
      let out = text;
      for (const { owner, mask } of list) {
        try {
          out = mask(out);
        } catch (error) {
          return `[text withheld: mask of ${owner} failed: ${error instanceof Error ? error.message : String(error)}]`;
        }
      }
      return out;
    },
    get size() {
      return list.length;
    },
  };
}

/** The text masks of the harness `owner` (a plugin's `rein`, or a harness) belongs to. */
export function textMasks(owner: object): TextMasks {
  return sharedService(owner, KEY, createTextMasks);
}
