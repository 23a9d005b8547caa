// Usage: node run.mjs PLUGIN.wasm FUNCTION INPUT
// Calls FUNCTION of the plugin in @extism/extism (WASI on) and prints the
// output on stdout; exits 1 with the error on stderr.
//
// The environment chooses the host:
//   EXTISM_PACKAGE  @extism/extism (1.0.3, the stable release; default) or
//                   extism2 (2.0.0-rc13, which has http_headers)
//   ALLOWED_HOSTS   comma-separated hosts the plugin may reach over HTTP
//   STUB_HEADERS=1  the embedder supplies http_headers itself (answering
//                   "no headers"), as an application on 1.0.3, which lacks
//                   it, can through createPlugin's functions option
import { readFile } from "node:fs/promises";

const [file, fn, input] = process.argv.slice(2);
try {
  const { default: createPlugin } = await import(process.env.EXTISM_PACKAGE || "@extism/extism");
  const allowedHosts = (process.env.ALLOWED_HOSTS || "").split(",").filter(Boolean);
  // Both releases make HTTP requests only from a plugin in a worker.
  const opts = { useWasi: true, runInWorker: allowedHosts.length > 0, allowedHosts, allowHttpResponseHeaders: true };
  if (process.env.STUB_HEADERS === "1") {
    opts.functions = { "extism:host/env": { http_headers: () => 0n } };
  }
  const plugin = await createPlugin({ wasm: [{ data: await readFile(file) }] }, opts);
  const out = await plugin.call(fn, input ?? "");
  process.stdout.write(out === null ? "" : out.text());
  await plugin.close();
} catch (err) {
  process.stderr.write(String(err?.stack ?? err) + "\n");
  process.exit(1);
}
