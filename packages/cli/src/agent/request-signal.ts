/**
 * One abort signal per model request. The harness hands its run signal to every
 * request; provider clients add an `abort` listener to the signal they get and do
 * not always remove it, so a long run piled up listeners on the one run signal
 * (Node's MaxListenersExceededWarning after 10 requests: a real leak). Invariant:
 * each request gets its own signal, linked to the run signal while the request
 * lives and unlinked when its stream ends, so the run signal holds at most one of
 * our listeners at any time and aborting the run still aborts the request. Each request
 * also carries the identity its API needs on top of the collection's (`withReinIdentity`:
 * Bedrock's `User-Agent` token).
 */
import type { Api, Model, Models } from "@earendil-works/pi-ai";
import { withReinIdentity } from "@rein/harness";

type StreamFunction = Models["streamSimple"];

/** `models`: the collection, or where to find the current one (`/model` switches it between requests). */
export function perRequestSignal(models: Models | (() => Models)): StreamFunction {
  const current = typeof models === "function" ? models : () => models;
  const stream: StreamFunction = (model, context, options) =>
    current().streamSimple(model, context, withReinIdentity(model.api, options));
  return (model: Model<Api>, context, options) => {
    const runSignal = options?.signal;
    if (!runSignal) return stream(model, context, options);
    const request = new AbortController();
    const forward = () => request.abort(runSignal.reason);
    if (runSignal.aborted) forward();
    else runSignal.addEventListener("abort", forward, { once: true });
    const response = stream(model, context, { ...options, signal: request.signal });
    const unlink = () => runSignal.removeEventListener("abort", forward);
    response.result().then(unlink, unlink);
    return response;
  };
}
