// The TypeScript SDK's MCP client against agenthost's endpoint: lists the
// tools and calls two (one fails on purpose); prints what it got as JSON
// lines. Usage: node tsclient.mjs URL TOKEN (an empty TOKEN sends none).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token] = process.argv.slice(2);
const headers = token ? { Authorization: `Bearer ${token}` } : {};
const client = new Client({ name: "agenthost-ts-test", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
try {
  await client.connect(transport);
} catch (e) {
  console.log(`refused: ${e.message}`);
  process.exit(0);
}
const tools = await client.listTools();
console.log(JSON.stringify({ tools: tools.tools.map((t) => ({ name: t.name, annotations: t.annotations })) }));
console.log(JSON.stringify(await client.callTool({ name: "test_simple_text", arguments: {} })));
console.log(JSON.stringify(await client.callTool({ name: "test_error_handling", arguments: {} })));
await client.close();
