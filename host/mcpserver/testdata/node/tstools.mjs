// The TypeScript SDK's MCP client on one session of agenthost's endpoint,
// driven line by line from stdin: "list" prints the tools as the client
// got them (name, title, description, annotations, _meta), "call NAME
// JSON" a call's result, "close" ends the session. A tools/list_changed
// notification prints {"changed": true}. Usage: node tstools.mjs URL TOKEN.
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [url, token] = process.argv.slice(2);
const client = new Client({ name: "agenthost-ts-tools", version: "1.0.0" });
client.setNotificationHandler(ToolListChangedNotificationSchema, () => console.log(JSON.stringify({ changed: true })));
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
await client.connect(transport);
console.log(JSON.stringify({ session: transport.sessionId }));
for await (const line of createInterface({ input: process.stdin })) {
  const [cmd, name, ...rest] = line.split(" ");
  try {
    if (cmd === "list") {
      const { tools } = await client.listTools();
      console.log(JSON.stringify({ tools: tools.map((t) => ({ name: t.name, title: t.title, description: t.description, annotations: t.annotations, meta: t._meta })) }));
    } else if (cmd === "call") {
      console.log(JSON.stringify({ result: await client.callTool({ name, arguments: JSON.parse(rest.join(" ") || "{}") }) }));
    } else if (cmd === "close") {
      await client.close();
      console.log(JSON.stringify({ closed: true }));
      process.exit(0);
    }
  } catch (e) {
    console.log(JSON.stringify({ error: e.message }));
  }
}
