/**
 * Recorded Markdown (a model's answer, a user's prompt) as safe HTML for the
 * session page. `marked` parses it (GFM, single newlines kept as `<br>`: chat
 * text is written line by line); `sanitize-html` then keeps only an allowlist
 * of tags, attributes and URL schemes, so raw HTML, `javascript:` links, event
 * handlers and styles in a recorded text never reach the page as markup.
 * Invariant: the result is safe whatever the input (anything recorded may be
 * hostile); only the allowlist below decides what survives.
 */
import { Marked } from "marked";
import sanitizeHtml from "sanitize-html";

// Its own instance: options never leak into, or from, another user of marked (pi-tui).
const parser = new Marked({ gfm: true, breaks: true, async: false });

const ALLOWED: sanitizeHtml.IOptions = {
  allowedTags: [
    "p",
    "br",
    "hr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "strong",
    "em",
    "del",
    "code",
    "pre",
    "blockquote",
    "ul",
    "ol",
    "li",
    "a",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "input",
  ],
  allowedAttributes: {
    a: ["href", "title", "rel"],
    code: ["class"],
    ol: ["start"],
    th: ["align"],
    td: ["align"],
    // GFM task lists: `- [x] done` renders a disabled checkbox.
    input: ["type", "checked", "disabled"],
  },
  allowedClasses: { code: [/^language-[\w+-]+$/] },
  allowedSchemes: ["http", "https", "mailto"],
  allowedSchemesAppliedToAttributes: ["href"],
  allowProtocolRelative: false,
  // A tag not on the list is dropped with its content only where the content is code to run.
  disallowedTagsMode: "discard",
  nonTextTags: ["script", "style", "textarea", "noscript", "iframe", "object"],
  transformTags: {
    // Links leave the page; they never get the page's opener.
    a: sanitizeHtml.simpleTransform("a", { rel: "noopener noreferrer nofollow" }),
    input: (tagName, attribs) =>
      attribs.type === "checkbox"
        ? {
            tagName,
            attribs: { type: "checkbox", disabled: "", ...("checked" in attribs ? { checked: "" } : {}) },
          }
        : { tagName: "span", attribs: {} },
  },
};

/** `text` rendered as Markdown, sanitised. */
export function markdownHtml(text: string): string {
  const html = parser.parse(text) as string;
  return sanitizeHtml(html, ALLOWED);
}
