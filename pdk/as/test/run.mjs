// Usage: node run.mjs PLUGIN.wasm FUNCTION INPUT
// Calls FUNCTION of the plugin in @extism/extism (WASI on) and prints the
// output on stdout; exits 1 with the error on stderr
// (host/wasm/assemblyscript_test.go runs AssemblyScript plugins in it).
//
// It serves one agenthost capability, agenthost:progress report, as any
// Extism host may (docs/plugin-abi.md#capabilities): the request is JSON in
// kernel memory, the answer {"ok":true,"data":{}}; each request goes to
// stderr as "progress REQUEST".
import createPlugin from "@extism/extism";
import { readFile } from "node:fs/promises";

const [file, fn, input] = process.argv.slice(2);
try {
  const plugin = await createPlugin(
    { wasm: [{ data: await readFile(file) }] },
    {
      useWasi: true,
      runInWorker: false,
      functions: {
        "agenthost:progress": {
          report(cx, offset) {
            process.stderr.write("progress " + cx.read(offset).text() + "\n");
            return cx.store('{"ok":true,"data":{}}');
          },
        },
      },
    },
  );
  const out = await plugin.call(fn, input ?? "");
  process.stdout.write(out === null ? "" : out.text());
  await plugin.close();
} catch (err) {
  process.stderr.write(String(err?.stack ?? err) + "\n");
  process.exit(1);
}
