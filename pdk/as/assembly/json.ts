// A small JSON reader and writer for tool arguments and results.
//
// AssemblyScript has no JSON in its standard library, and the usual packages
// need a compiler transform; a tool's arguments are small documents the host
// has already validated against the tool's input schema, so a plain
// recursive-descent parser is enough. Nesting is bounded (maxDepth) so that a
// hostile document cannot exhaust the guest's stack.

/** The kinds of JSON value. */
export enum Kind {
  Null,
  Bool,
  Number,
  String,
  Array,
  Object,
}

/** The deepest nesting parse accepts. */
const maxDepth = 64;

/** One parsed JSON value. */
export class Value {
  kind: Kind = Kind.Null;
  b: bool = false;
  n: f64 = 0;
  s: string = "";
  items: Value[] = [];
  keys: string[] = [];
  fields: Map<string, Value> = new Map<string, Value>();

  /** The field key of an object, or null when absent or not an object. */
  get(key: string): Value | null {
    if (this.kind != Kind.Object || !this.fields.has(key)) return null;
    return this.fields.get(key);
  }

  /** The string field key, or def when it is absent or not a string. */
  getString(key: string, def: string = ""): string {
    const v = this.get(key);
    return v != null && v.kind == Kind.String ? v.s : def;
  }

  /** The number field key, or def when it is absent or not a number. */
  getNumber(key: string, def: f64 = 0): f64 {
    const v = this.get(key);
    return v != null && v.kind == Kind.Number ? v.n : def;
  }

  /** The boolean field key, or def when it is absent or not a boolean. */
  getBool(key: string, def: bool = false): bool {
    const v = this.get(key);
    return v != null && v.kind == Kind.Bool ? v.b : def;
  }

  /** The value as JSON text. */
  toJSON(): string {
    switch (this.kind) {
      case Kind.Bool:
        return this.b ? "true" : "false";
      case Kind.Number:
        return number(this.n);
      case Kind.String:
        return quote(this.s);
      case Kind.Array: {
        const parts = new Array<string>(this.items.length);
        for (let i = 0; i < this.items.length; i++) parts[i] = this.items[i].toJSON();
        return "[" + parts.join(",") + "]";
      }
      case Kind.Object: {
        const parts = new Array<string>(this.keys.length);
        for (let i = 0; i < this.keys.length; i++) {
          parts[i] = quote(this.keys[i]) + ":" + this.fields.get(this.keys[i]).toJSON();
        }
        return "{" + parts.join(",") + "}";
      }
    }
    return "null";
  }
}

/** The outcome of parse: a value, or why the text is not JSON. */
export class Parsed {
  value: Value | null = null;
  error: string = "";
}

/** Parses one JSON document (surrounding white space allowed). */
export function parse(text: string): Parsed {
  const p = new Parser(text);
  const out = new Parsed();
  const v = p.value(0);
  if (v != null) {
    p.space();
    if (p.pos < text.length) p.fail("unexpected text after the document");
  }
  if (p.err.length > 0) {
    out.error = p.err + " at offset " + p.pos.toString();
    return out;
  }
  out.value = v;
  return out;
}

class Parser {
  s: string;
  pos: i32 = 0;
  err: string = "";

  constructor(s: string) {
    this.s = s;
  }

  fail(why: string): Value | null {
    if (this.err.length == 0) this.err = why;
    return null;
  }

  space(): void {
    while (this.pos < this.s.length) {
      const c = this.s.charCodeAt(this.pos);
      if (c != 0x20 && c != 0x09 && c != 0x0a && c != 0x0d) break;
      this.pos++;
    }
  }

  literal(word: string): bool {
    if (this.s.substr(this.pos, word.length) != word) return false;
    this.pos += word.length;
    return true;
  }

  value(depth: i32): Value | null {
    if (depth > maxDepth) return this.fail("nested deeper than " + maxDepth.toString());
    this.space();
    if (this.pos >= this.s.length) return this.fail("unexpected end");
    const c = this.s.charCodeAt(this.pos);
    const v = new Value();
    if (c == 0x7b) return this.object(depth);
    if (c == 0x5b) return this.array(depth);
    if (c == 0x22) {
      const str = this.str();
      if (str == null) return null;
      v.kind = Kind.String;
      v.s = str;
      return v;
    }
    if (this.literal("true")) {
      v.kind = Kind.Bool;
      v.b = true;
      return v;
    }
    if (this.literal("false")) {
      v.kind = Kind.Bool;
      return v;
    }
    if (this.literal("null")) return v;
    return this.num();
  }

  num(): Value | null {
    const start = this.pos;
    while (this.pos < this.s.length) {
      const c = this.s.charCodeAt(this.pos);
      if ((c >= 0x30 && c <= 0x39) || c == 0x2d || c == 0x2b || c == 0x2e || c == 0x65 || c == 0x45) this.pos++;
      else break;
    }
    if (this.pos == start) return this.fail("unexpected character");
    const n = parseFloat(this.s.substring(start, this.pos));
    if (isNaN(n)) return this.fail("invalid number");
    const v = new Value();
    v.kind = Kind.Number;
    v.n = n;
    return v;
  }

  str(): string | null {
    this.pos++; // the opening quote
    const parts: string[] = [];
    let start = this.pos;
    while (this.pos < this.s.length) {
      const c = this.s.charCodeAt(this.pos);
      if (c == 0x22) {
        parts.push(this.s.substring(start, this.pos));
        this.pos++;
        return parts.join("");
      }
      if (c < 0x20) {
        this.fail("control character in a string");
        return null;
      }
      if (c != 0x5c) {
        this.pos++;
        continue;
      }
      parts.push(this.s.substring(start, this.pos));
      this.pos++;
      if (this.pos >= this.s.length) break;
      const e = this.s.charCodeAt(this.pos);
      this.pos++;
      if (e == 0x22) parts.push('"');
      else if (e == 0x5c) parts.push("\\");
      else if (e == 0x2f) parts.push("/");
      else if (e == 0x62) parts.push("\b");
      else if (e == 0x66) parts.push("\f");
      else if (e == 0x6e) parts.push("\n");
      else if (e == 0x72) parts.push("\r");
      else if (e == 0x74) parts.push("\t");
      else if (e == 0x75) {
        if (this.pos + 4 > this.s.length) break;
        const code = I32.parseInt(this.s.substr(this.pos, 4), 16);
        if (isNaN(<f64>code)) {
          this.fail("invalid \\u escape");
          return null;
        }
        // Surrogate halves are kept as UTF-16 code units: a pair
        // escaped as two \u sequences becomes one character.
        parts.push(String.fromCharCode(code));
        this.pos += 4;
      } else {
        this.fail("invalid escape");
        return null;
      }
      start = this.pos;
    }
    this.fail("unterminated string");
    return null;
  }

  array(depth: i32): Value | null {
    this.pos++;
    const v = new Value();
    v.kind = Kind.Array;
    this.space();
    if (this.pos < this.s.length && this.s.charCodeAt(this.pos) == 0x5d) {
      this.pos++;
      return v;
    }
    while (true) {
      const item = this.value(depth + 1);
      if (item == null) return null;
      v.items.push(item);
      this.space();
      if (this.pos >= this.s.length) return this.fail("unterminated array");
      const c = this.s.charCodeAt(this.pos++);
      if (c == 0x5d) return v;
      if (c != 0x2c) return this.fail("expected , or ]");
    }
  }

  object(depth: i32): Value | null {
    this.pos++;
    const v = new Value();
    v.kind = Kind.Object;
    this.space();
    if (this.pos < this.s.length && this.s.charCodeAt(this.pos) == 0x7d) {
      this.pos++;
      return v;
    }
    while (true) {
      this.space();
      if (this.pos >= this.s.length || this.s.charCodeAt(this.pos) != 0x22) return this.fail("expected a key");
      const key = this.str();
      if (key == null) return null;
      this.space();
      if (this.pos >= this.s.length || this.s.charCodeAt(this.pos) != 0x3a) return this.fail("expected :");
      this.pos++;
      const item = this.value(depth + 1);
      if (item == null) return null;
      if (!v.fields.has(key)) v.keys.push(key);
      v.fields.set(key, item);
      this.space();
      if (this.pos >= this.s.length) return this.fail("unterminated object");
      const c = this.s.charCodeAt(this.pos++);
      if (c == 0x7d) return v;
      if (c != 0x2c) return this.fail("expected , or }");
    }
  }
}

const hex = "0123456789abcdef";

/** s as a JSON string literal. */
export function quote(s: string): string {
  const parts: string[] = ['"'];
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c != 0x22 && c != 0x5c) continue;
    parts.push(s.substring(start, i));
    if (c == 0x22) parts.push('\\"');
    else if (c == 0x5c) parts.push("\\\\");
    else if (c == 0x0a) parts.push("\\n");
    else if (c == 0x0d) parts.push("\\r");
    else if (c == 0x09) parts.push("\\t");
    else parts.push("\\u00" + hex.charAt(c >> 4) + hex.charAt(c & 15));
    start = i + 1;
  }
  parts.push(s.substring(start));
  parts.push('"');
  return parts.join("");
}

/** n as a JSON number: integers without a fraction; NaN and infinities, which JSON cannot say, as null. */
export function number(n: f64): string {
  if (!isFinite(n)) return "null";
  if (n == Math.floor(n) && Math.abs(n) < 9007199254740992) return (<i64>n).toString();
  return n.toString();
}

/**
 * Builds a JSON object field by field:
 * `new ObjectWriter().str("name", n).num("count", 3).toString()`.
 */
export class ObjectWriter {
  parts: string[] = [];

  /** Adds a string field. */
  str(key: string, value: string): ObjectWriter {
    this.parts.push(quote(key) + ":" + quote(value));
    return this;
  }

  /** Adds a number field. */
  num(key: string, value: f64): ObjectWriter {
    this.parts.push(quote(key) + ":" + number(value));
    return this;
  }

  /** Adds a boolean field. */
  bool(key: string, value: bool): ObjectWriter {
    this.parts.push(quote(key) + ":" + (value ? "true" : "false"));
    return this;
  }

  /** Adds a field whose value is already JSON text. */
  raw(key: string, json: string): ObjectWriter {
    this.parts.push(quote(key) + ":" + json);
    return this;
  }

  toString(): string {
    return "{" + this.parts.join(",") + "}";
  }
}
