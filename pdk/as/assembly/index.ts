// agenthost's AssemblyScript PDK: what agenthost adds to the Extism guest ABI
// (docs/plugin-abi.md), for plugins written in AssemblyScript.
//
// A plugin registers its tools at top level and re-exports the PDK's
// describe and call from its entry file:
//
//   import * as pdk from "@agenthost/as-pdk";
//   export { describe, call } from "@agenthost/as-pdk";
//
//   function greet(args: pdk.Value): pdk.Result {
//     return pdk.Result.text("Hello, " + args.getString("name") + "!");
//   }
//   pdk.tool("greet", "Greets someone.", `{"type":"object","properties":{"name":{"type":"string"}}}`, greet).readOnly();
//
// Build with `agenthost plugin build DIR` (which runs asc with the options of
// DIR/asconfig.json, `--exportStart _initialize` and `--use abort=...` among
// them). The host validates a call's arguments against the tool's input
// schema before the plugin runs, so a handler reads them without re-checking
// their types.
//
// Everything goes through the standard Extism imports (extism:host/env)
// unless a plugin calls an agenthost capability, so a plugin runs in any
// Extism host.

import { Host, Memory } from "@extism/as-pdk";
import { error_set, http_request, length } from "@extism/as-pdk/lib/env";
import { Kind, Value, parse, quote } from "./json";


/** A tool's handler: the parsed arguments object in, a Result out. */
export type Handler = (args: Value) => Result;

/**
 * A tool's answer. AssemblyScript has no exceptions (a throw aborts the
 * call), so a handler returns a failure as Result.error.
 */
export class Result {
  ok: bool = true;
  /** "text", "json" or "none". */
  body: string = "text";
  content: string = "";
  /** A short human summary of a JSON result. */
  summary: string = "";
  code: string = "";
  message: string = "";

  /** A text result. */
  static text(text: string): Result {
    const r = new Result();
    r.content = text;
    return r;
  }

  /** A structured result: json must be one JSON document (see ObjectWriter). */
  static json(json: string, summary: string = ""): Result {
    const r = new Result();
    r.body = "json";
    r.content = json;
    r.summary = summary;
    return r;
  }

  /** A failure with a code a model can act on (e.g. invalid_arguments, not_found). */
  static error(code: string, message: string): Result {
    const r = new Result();
    r.ok = false;
    r.code = code;
    r.message = message;
    return r;
  }

  /** The result frame: HEADER "\n" BODY (docs/plugin-abi.md#result-frame). */
  frame(): string {
    if (!this.ok) {
      return '{"ok":false,"error":{"code":' + quote(this.code) + ',"message":' + quote(this.message) + "}}\n";
    }
    let header = '{"ok":true,"body":' + quote(this.body);
    if (this.summary.length > 0) header += ',"text":' + quote(this.summary);
    return header + "}\n" + this.content;
  }
}

/** One registered tool; its setters return it so registration reads as one line. */
export class Tool {
  name: string;
  description: string;
  inputSchema: string;
  handler: Handler;
  isReadOnly: bool = false;
  outputSchema: string = "";
  external: string = "";

  constructor(name: string, description: string, inputSchema: string, handler: Handler) {
    this.name = name;
    this.description = description;
    this.inputSchema = inputSchema;
    this.handler = handler;
  }

  /** Marks a tool that changes nothing outside the call: the host may run it in parallel and links it only to read capabilities (its HTTP is GET and HEAD). */
  readOnly(): Tool {
    this.isReadOnly = true;
    return this;
  }

  /** Declares the JSON Schema of the structured result; the host checks results against it. */
  output(schema: string): Tool {
    checkSchema(this.name, "output", schema);
    this.outputSchema = schema;
    return this;
  }

  /** Declares the tool's side effect outside agenthost ("mail", "upload", "post", "create", "update", "delete", "payment", "other"). */
  externalEffect(kind: string): Tool {
    this.external = kind;
    return this;
  }

  describe(): string {
    let s = '{"name":' + quote(this.name) + ',"description":' + quote(this.description) +
      ',"readOnly":' + (this.isReadOnly ? "true" : "false") + ',"inputSchema":' + this.inputSchema;
    if (this.outputSchema.length > 0) s += ',"outputSchema":' + this.outputSchema;
    if (this.external.length > 0) s += ',"external":' + quote(this.external);
    return s + "}";
  }
}

const tools = new Map<string, Tool>();

/**
 * Registers a tool. inputSchema is its arguments' JSON Schema (an object
 * schema). Registering a name twice or a schema that is not JSON aborts at
 * start-up, where `agenthost plugin build` shows it.
 */
export function tool(name: string, description: string, inputSchema: string, handler: Handler): Tool {
  if (tools.has(name)) abort("tool " + name + " registered twice");
  checkSchema(name, "input", inputSchema);
  const t = new Tool(name, description, inputSchema, handler);
  tools.set(name, t);
  return t;
}

function checkSchema(name: string, which: string, schema: string): void {
  const p = parse(schema);
  if (p.value == null || p.value!.kind != Kind.Object) abort("tool " + name + ": the " + which + " schema is not a JSON object: " + p.error);
}

/** The describe export: the registered tools as a JSON array, sorted by name. */
export function describe(): i32 {
  const names = tools.keys();
  names.sort();
  const parts = new Array<string>(names.length);
  for (let i = 0; i < names.length; i++) parts[i] = tools.get(names[i]).describe();
  output("[" + parts.join(",") + "]");
  return 0;
}

/** The call export: input TOOL "\n" ARGS, output a result frame. */
export function call(): i32 {
  const input = Host.inputString();
  let name = input;
  let args = "";
  const nl = input.indexOf("\n");
  if (nl >= 0) {
    name = input.substring(0, nl);
    args = input.substring(nl + 1);
  }
  if (!tools.has(name)) {
    output(Result.error("unknown_tool", "this plugin has no tool " + quote(name)).frame());
    return 0;
  }
  let v = new Value();
  v.kind = Kind.Object;
  if (args.length > 0) {
    const p = parse(args);
    if (p.value == null) {
      output(Result.error("invalid_arguments", p.error).frame());
      return 0;
    }
    v = p.value!;
  }
  output(tools.get(name).handler(v).frame());
  // A full collection once the answer is out: the incremental collector may
  // not have caught up with a call's garbage (megabytes of strings), and the
  // next call's growth, by doubling, would then hit the memory limit early.
  // What stays live between calls is small, so this is cheap.
  __collect();
  return 0;
}

/**
 * Writes s as the call's output, its UTF-8 bytes. (@extism/as-pdk's
 * outputString announces the UTF-16 length, which is wrong for any text
 * that is not ASCII.)
 */
function output(s: string): void {
  Host.output(Uint8Array.wrap(String.UTF8.encode(s)));
}

/**
 * The abort handler plugins build with (`--use abort=...`, asconfig.json):
 * the message reaches the host through error_set, then the call traps. A
 * plain abort would import env.abort, which no Extism host provides.
 */
export function agenthostAbort(message: string | null = null, fileName: string | null = null, line: u32 = 0, column: u32 = 0): void {
  let m = "abort: " + (message == null ? "" : message);
  if (fileName != null) m += " (" + fileName + ":" + line.toString() + ":" + column.toString() + ")";
  error_set(Memory.allocateString(m).offset);
  unreachable();
}

@external("extism:host/env", "http_status_code")
declare function http_status_code(): i32;

/** An HTTP answer. */
export class HttpResponse {
  status: i32 = 0;
  body: Uint8Array = new Uint8Array(0);

  /** The body as UTF-8 text. */
  text(): string {
    return String.UTF8.decode(this.body.buffer);
  }
}

/**
 * Sends an HTTP request through the host (capability "http", hosts from the
 * manifest's limits.allowedHosts; a read-only tool may only GET and HEAD).
 * The host ends the call when the request is refused or fails.
 */
export function httpRequest(method: string, url: string, headers: Map<string, string> | null = null, body: Uint8Array | null = null): HttpResponse {
  let h = "{";
  if (headers != null) {
    const keys = headers.keys();
    for (let i = 0; i < keys.length; i++) {
      if (i > 0) h += ",";
      h += quote(keys[i]) + ":" + quote(headers.get(keys[i]));
    }
  }
  h += "}";
  const req = Memory.allocateString('{"method":' + quote(method) + ',"url":' + quote(url) + ',"headers":' + h + "}");
  let bodyOffset: u64 = 0;
  if (body != null && body.length > 0) bodyOffset = Memory.allocateBytes(body).offset;
  const off = http_request(req.offset, bodyOffset);
  const r = new HttpResponse();
  r.status = http_status_code();
  if (off != 0) r.body = new Memory(off, length(off)).toUint8Array();
  return r;
}

/** A capability's answer: data (JSON text) when ok, else code and message. */
export class Answer {
  ok: bool = false;
  data: string = "";
  code: string = "";
  message: string = "";
}

/**
 * Puts a capability request (JSON text) into kernel memory and returns its
 * offset, for an agenthost capability import (docs/plugin-abi.md#capabilities):
 *
 *   @external("agenthost:progress", "report")
 *   declare function report(req: u64): u64;
 *   const a = pdk.answer(report(pdk.request('{"fraction":0.5,"message":"half"}')));
 */
export function request(json: string): u64 {
  return Memory.allocateString(json).offset;
}

/** Reads a capability's response at offset: {"ok":true,"data":...} or {"ok":false,"error":{...}}. */
export function answer(offset: u64): Answer {
  const a = new Answer();
  if (offset == 0) {
    a.code = "bad_response";
    a.message = "the capability answered nothing";
    return a;
  }
  const p = parse(new Memory(offset, length(offset)).toString());
  const v = p.value;
  if (v == null) {
    a.code = "bad_response";
    a.message = p.error;
    return a;
  }
  if (v.getBool("ok")) {
    a.ok = true;
    const d = v.get("data");
    a.data = d == null ? "null" : d.toJSON();
    return a;
  }
  const e = v.get("error");
  a.code = e == null ? "error" : e.getString("code", "error");
  a.message = e == null ? "capability failed" : e.getString("message");
  return a;
}
