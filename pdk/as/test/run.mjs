// Usage: node run.mjs PLUGIN.wasm FUNCTION INPUT
// Calls FUNCTION of the plugin in @extism/extism (WASI on) and prints the
// output on stdout (host/wasm/assemblyscript_test.go runs AssemblyScript
// plugins in it);
// exits 1 with the error on stderr.
import createPlugin from "@extism/extism";
import { readFile } from "node:fs/promises";

const [file, fn, input] = process.argv.slice(2);
try {
  const plugin = await createPlugin(
    { wasm: [{ data: await readFile(file) }] },
    { useWasi: true, runInWorker: false },
  );
  const out = await plugin.call(fn, input ?? "");
  process.stdout.write(out === null ? "" : out.text());
  await plugin.close();
} catch (err) {
  process.stderr.write(String(err?.stack ?? err) + "\n");
  process.exit(1);
}
