// astext is agenthost's test plugin written in AssemblyScript: one useful
// read-only tool (text statistics), one that repeats text (output sizes),
// one that fetches a URL through the host, and hostile tools the host must
// contain (an endless loop, a memory bomb, a broken result frame, an abort).
import * as pdk from "@agenthost/as-pdk";
export { describe } from "@agenthost/as-pdk";

// call is the PDK's, except for the tool badFrame, which answers
// something that is not a result frame (the PDK cannot be made to).
export function call(): i32 {
  const input = pdk.Host.inputString();
  if (input.startsWith("badFrame\n")) {
    pdk.Host.output(Uint8Array.wrap(String.UTF8.encode("this is not a frame")));
    return 0;
  }
  return pdk.call();
}

function isSpace(c: i32): bool {
  return c == 0x20 || c == 0x09 || c == 0x0a || c == 0x0d || c == 0x0c || c == 0x0b || c == 0xa0;
}

// stats counts what a writer asks about a text: characters (Unicode code
// points), UTF-8 bytes, words, lines and the longest word.
function stats(args: pdk.Value): pdk.Result {
  const text = args.getString("text");
  let chars = 0;
  let words = 0;
  let lines = text.length > 0 ? 1 : 0;
  let longest = "";
  let start = -1;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 0x20;
    if (i < text.length) {
      // A surrogate pair's second half is part of the first's character.
      if (c < 0xdc00 || c > 0xdfff) chars++;
      if (c == 0x0a) lines++;
    }
    if (isSpace(c)) {
      if (start >= 0) {
        words++;
        const w = text.substring(start, i);
        if (w.length > longest.length) longest = w;
        start = -1;
      }
    } else if (start < 0) {
      start = i;
    }
  }
  const bytes = String.UTF8.byteLength(text);
  const out = new pdk.ObjectWriter().num("characters", chars).num("bytes", bytes).num("words", words).num("lines", lines).str("longestWord", longest);
  return pdk.Result.json(out.toString(), words.toString() + " words, " + lines.toString() + " lines");
}

// repeat returns text times over: a large result in one frame.
function repeat(args: pdk.Value): pdk.Result {
  const times = <i32>args.getNumber("times", 1);
  return pdk.Result.text(args.getString("text").repeat(times));
}

// fetch GETs a URL through the host's egress-checked client.
function fetch(args: pdk.Value): pdk.Result {
  const r = pdk.httpRequest("GET", args.getString("url"));
  return pdk.Result.json(new pdk.ObjectWriter().num("status", r.status).str("body", r.text()).toString());
}

// spin never returns: the host's deadline must stop it.
function spin(args: pdk.Value): pdk.Result {
  let n: i64 = 0;
  while (args.kind == pdk.Kind.Object) n++;
  return pdk.Result.text(n.toString());
}

const kept: Uint8Array[] = [];

// allocate keeps allocating: the manifest's memory limit must stop it.
function allocate(args: pdk.Value): pdk.Result {
  while (true) {
    const b = new Uint8Array(1 << 20);
    for (let i = 0; i < b.length; i += 4096) b[i] = <u8>i;
    kept.push(b);
    if (b.length == 0) break;
  }
  return pdk.Result.text("unreachable");
}

// badFrame is answered by call above; it is registered so that the host lets it be called.
function badFrame(args: pdk.Value): pdk.Result {
  return pdk.Result.text("unreachable");
}

// fail aborts, as an AssemblyScript throw does.
function fail(args: pdk.Value): pdk.Result {
  abort("deliberate failure");
  return pdk.Result.text("");
}

// work reports its progress through the agenthost capability.
function work(args: pdk.Value): pdk.Result {
  const a = pdk.reportProgress(0.5, "halfway through " + args.getString("text"));
  if (!a.ok) return pdk.Result.error(a.code, a.message);
  return pdk.Result.text("done");
}

let remembered = "";

// remember keeps a text in the instance's memory and in a plugin variable;
// recall returns both: neither may reach another tenant's calls.
function remember(args: pdk.Value): pdk.Result {
  remembered = args.getString("text");
  pdk.Var.set("remembered", Uint8Array.wrap(String.UTF8.encode(remembered)));
  return pdk.Result.text("ok");
}

function recall(args: pdk.Value): pdk.Result {
  const v = pdk.Var.getString("remembered");
  return pdk.Result.json(new pdk.ObjectWriter().str("memory", remembered).str("variable", v == null ? "" : v).toString());
}

const objectWithText = `{"type":"object","properties":{"text":{"type":"string","description":"the text"}},"required":["text"],"additionalProperties":false}`;
const empty = `{"type":"object","additionalProperties":false}`;

pdk.tool("stats", "Counts the characters, UTF-8 bytes, words and lines of a text and finds its longest word.", objectWithText, stats)
  .readOnly()
  .output(`{"type":"object","properties":{"characters":{"type":"integer"},"bytes":{"type":"integer"},"words":{"type":"integer"},"lines":{"type":"integer"},"longestWord":{"type":"string"}},"required":["characters","bytes","words","lines","longestWord"]}`);
pdk.tool("repeat", "Repeats a text.", `{"type":"object","properties":{"text":{"type":"string"},"times":{"type":"integer","minimum":0}},"required":["text","times"],"additionalProperties":false}`, repeat).readOnly();
pdk.tool("fetch", "Fetches a URL (GET) and returns its status and body.", `{"type":"object","properties":{"url":{"type":"string"}},"required":["url"],"additionalProperties":false}`, fetch).readOnly();
pdk.tool("work", "Reports progress, then answers done.", objectWithText, work).readOnly();
pdk.tool("remember", "Remembers a text (instance memory and a plugin variable).", objectWithText, remember);
pdk.tool("recall", "Returns what remember kept.", empty, recall).readOnly();
pdk.tool("spin", "Hostile: loops forever.", empty, spin).readOnly();
pdk.tool("allocate", "Hostile: allocates memory without bound.", empty, allocate).readOnly();
pdk.tool("badFrame", "Hostile: answers something that is not a result frame.", empty, badFrame).readOnly();
pdk.tool("fail", "Hostile: aborts.", empty, fail).readOnly();
