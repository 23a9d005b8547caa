// The TypeScript SDK's MCP client keeping one session while the test
// swaps the host behind the URL: it connects, prints its session id, then
// on each line of stdin "call" calls test_simple_text and prints the result
// with the session id, "close" ends the session (DELETE) and exits.
// Usage: node tssession.mjs URL TOKEN
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token] = process.argv.slice(2);
const client = new Client({ name: "agenthost-ts-session", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
await client.connect(transport);
console.log(JSON.stringify({ session: transport.sessionId }));
for await (const line of createInterface({ input: process.stdin })) {
  try {
    if (line === "call") {
      const r = await client.callTool({ name: "test_simple_text", arguments: {} });
      console.log(JSON.stringify({ session: transport.sessionId, result: r }));
    } else if (line === "close") {
      await transport.terminateSession();
      console.log(JSON.stringify({ closed: true }));
      process.exit(0);
    }
  } catch (e) {
    console.log(JSON.stringify({ error: String(e.message ?? e) }));
  }
}
