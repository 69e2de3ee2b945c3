// A module resolve hook: examples/live/shared/kinds.js, wherever an app
// imports it from, is this folder's kinds.js (which imports the original as
// kinds.js?live, a URL this hook leaves alone).
const live = new URL('../../../examples/live/shared/kinds.js', import.meta.url).href;
const ours = new URL('./kinds.js', import.meta.url).href;

export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  return r.url === live ? { ...r, url: ours } : r;
}
