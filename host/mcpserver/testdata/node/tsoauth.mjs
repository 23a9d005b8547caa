// The TypeScript SDK's MCP client signing in through agenthost's
// authorization server with the SDK's own OAuth machinery (client/auth):
// it discovers the server from the endpoint's 401, registers itself
// (dynamic registration) or, with a metadata URL, uses a client ID
// metadata document, and sends the person to the authorization URL with
// PKCE and the resource. The person's part is the caller's: this script
// prints `AUTHORIZE <url>` and reads the redirect URL the browser was sent
// back to from stdin. Then it lists the tools, calls one, refreshes its
// tokens (the SDK's refresh grant) and prints what it got as JSON lines.
// Usage: node tsoauth.mjs URL [CLIENT_METADATA_URL]
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError, auth } from "@modelcontextprotocol/sdk/client/auth.js";

const [url, metadataUrl] = process.argv.slice(2);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const redirectUrl = "http://127.0.0.1:8976/callback";

let info, tokens, verifier;
const provider = {
  get redirectUrl() { return redirectUrl; },
  clientMetadataUrl: metadataUrl || undefined,
  get clientMetadata() {
    return { client_name: "TS SDK test client", redirect_uris: [redirectUrl], grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"], token_endpoint_auth_method: "none" };
  },
  clientInformation() { return info; },
  saveClientInformation(i) { info = i; console.log(JSON.stringify({ registered: i.client_id })); },
  tokens() { return tokens; },
  saveTokens(t) { tokens = t; console.log(JSON.stringify({ tokens: { scope: t.scope, expires_in: t.expires_in, refresh: !!t.refresh_token } })); },
  redirectToAuthorization(u) { console.log(`AUTHORIZE ${u.toString()}`); },
  saveCodeVerifier(v) { verifier = v; },
  codeVerifier() { return verifier; },
};

const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
const client = new Client({ name: "agenthost-ts-oauth-test", version: "1.0.0" });
try {
  await client.connect(transport);
  throw new Error("connected without signing in");
} catch (e) {
  if (!(e instanceof UnauthorizedError)) throw e;
}
const back = new URL((await lines.next()).value.trim());
if (back.searchParams.get("error")) throw new Error(`authorization refused: ${back.searchParams.get("error")}`);
await transport.finishAuth(back.searchParams.get("code"));

const again = new Client({ name: "agenthost-ts-oauth-test", version: "1.0.0" });
await again.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
const list = await again.listTools();
console.log(JSON.stringify({ tools: list.tools.length }));
const first = tokens.access_token;
// The refresh grant, as the SDK makes it when a token expires.
const result = await auth(provider, { serverUrl: new URL(url) });
console.log(JSON.stringify({ refreshed: result, rotated: tokens.access_token !== first }));
await again.close();
const third = new Client({ name: "agenthost-ts-oauth-test", version: "1.0.0" });
await third.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
console.log(JSON.stringify({ afterRefresh: (await third.listTools()).tools.length }));
await third.close();
process.exit(0);
