// Node 20 lacks fs.globSync, which @modelcontextprotocol/conformance imports
// (only its tier-check command calls it).  Run the conformance CLI with
// `node --import ./conformance-shim.mjs` and its `fs` import resolves to a
// module that adds a stub.  Not needed on Node 22 and later.
import { register } from 'node:module';
import fs from 'node:fs';

if (typeof fs.globSync !== 'function') {
  register('data:text/javascript,' + encodeURIComponent(`
    export async function resolve(spec, ctx, next) {
      if ((spec === 'fs' || spec === 'node:fs') && ctx.parentURL && ctx.parentURL.includes('/conformance/'))
        return { url: 'data:text/javascript,' + encodeURIComponent(
          "export * from 'node:fs'; export { default } from 'node:fs';" +
          "export function globSync() { throw new Error('globSync needs Node 22'); }"), shortCircuit: true };
      return next(spec, ctx);
    }`));
}
