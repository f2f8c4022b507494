// RFC 8259 JSON text in, RFC 8785 canonical JSON out (docs/spec.md section 1).
// The parser refuses what section 1.1 refuses, first fault in document order, with the
// `field` of section 1.2; JavaScript's own Number-to-string is RFC 8785's number text.

export const MAX_DEPTH = 125;

/** A refusal of the commitment core: a stable `code` and the committed path `field`. */
export class CommitError extends Error {
  constructor(code, message, field = null) {
    super(message);
    this.code = code;
    this.field = field;
  }
}

/** A number as written: its double and whether its text was an integer (no '.', no 'e'),
 * which a strict schema needs ("seq": 4.0 is not an integer). Only with {tagged: true}. */
export class JsonNumber {
  constructor(value, integral) {
    this.value = value;
    this.integral = integral;
  }
}

/** RFC 6901 token of a member name. */
export function escapeToken(name) {
  return name.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** `<vector>:<pointer>` of a list of steps (member names as strings, indexes as numbers). */
export function committedPath(steps) {
  const vector = steps.map((step) => (typeof step === "number" ? "a" : "o")).join("");
  const pointer = steps
    .map((step) => "/" + (typeof step === "number" ? String(step) : escapeToken(step)))
    .join("");
  return `${vector}:${pointer}`;
}

const utf8Decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** UTF-8 bytes to text; a byte-order mark is kept (and is then not JSON). */
export function decodeUtf8(bytes) {
  try {
    return utf8Decoder.decode(bytes);
  } catch {
    throw new CommitError("invalid_utf8", "input is not UTF-8");
  }
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const WHITESPACE = /[ \t\n\r]*/y;
const UNESCAPED = /[^"\\\u0000-\u001f]*/y;
const SHORT_ESCAPES = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

/** One JSON text to values: objects without prototype (so "__proto__" is a member like any
 * other), arrays, numbers (doubles, or JsonNumber when tagged), strings, booleans, null. */
export function parse(text, { tagged = false } = {}) {
  let pos = 0;
  const steps = [];
  const invalid = (rule) => {
    throw new CommitError("invalid_json", `invalid JSON at character ${pos}: ${rule}`);
  };
  const skip = () => {
    WHITESPACE.lastIndex = pos;
    WHITESPACE.exec(text);
    pos = WHITESPACE.lastIndex;
  };
  const consume = (char) => {
    if (text[pos] !== char) return false;
    pos += 1;
    skip();
    return true;
  };
  const expect = (char) => consume(char) || invalid(`'${char}' was expected`);
  const separator = (end) => {
    skip();
    if (consume(",")) return true;
    expect(end);
    return false;
  };
  const enter = (level) => {
    if (level > MAX_DEPTH) {
      const field = committedPath(steps);
      throw new CommitError("depth_exceeded", `${field} opens nesting level ${level}`, field);
    }
    pos += 1;
    skip();
  };

  function value(level) {
    const char = text[pos];
    if (char === "{") return object(level + 1);
    if (char === "[") return array(level + 1);
    if (char === '"') return string();
    if (char === "-" || (char >= "0" && char <= "9")) return number();
    for (const [literal, result] of [["true", true], ["false", false], ["null", null]]) {
      if (text.startsWith(literal, pos)) {
        pos += literal.length;
        return result;
      }
    }
    return invalid("a value was expected");
  }

  function object(level) {
    enter(level);
    const members = Object.create(null);
    let repeated = null;
    if (!consume("}")) {
      do {
        if (text[pos] !== '"') invalid("a member name was expected");
        const name = string();
        if (Object.hasOwn(members, name) && repeated === null) repeated = name;
        skip();
        expect(":");
        steps.push(name);
        members[name] = value(level);
        steps.pop();
      } while (separator("}"));
    }
    if (repeated !== null) {
      const field = committedPath([...steps, repeated]);
      throw new CommitError("duplicate_member", `member ${field} appears twice`, field);
    }
    return members;
  }

  function array(level) {
    enter(level);
    const elements = [];
    if (!consume("]")) {
      do {
        steps.push(elements.length);
        elements.push(value(level));
        steps.pop();
      } while (separator("]"));
    }
    return elements;
  }

  function number() {
    NUMBER.lastIndex = pos;
    const match = NUMBER.exec(text);
    if (match === null) invalid("malformed number");
    const result = Number(match[0]);
    if (!Number.isFinite(result)) {
      const field = steps.length ? committedPath(steps) : null;
      throw new CommitError("number_out_of_range", "a number beyond the range of a double", field);
    }
    pos = NUMBER.lastIndex;
    return tagged ? new JsonNumber(result, !/[.eE]/.test(match[0])) : result;
  }

  function string() {
    pos += 1;
    let out = "";
    for (;;) {
      UNESCAPED.lastIndex = pos;
      out += UNESCAPED.exec(text)[0];
      pos = UNESCAPED.lastIndex;
      const char = text[pos];
      if (char === '"') {
        pos += 1;
        return out;
      }
      if (char === "\\") out += escape();
      else if (char === undefined) invalid("unterminated string");
      else invalid("control character in a string must be escaped");
    }
  }

  function hex4(at) {
    const digits = text.slice(at, at + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(digits)) {
      pos = at;
      invalid("\\u must be followed by four hexadecimal digits");
    }
    return parseInt(digits, 16);
  }

  function escape() {
    const letter = text[pos + 1];
    if (letter !== undefined && Object.hasOwn(SHORT_ESCAPES, letter)) {
      pos += 2;
      return SHORT_ESCAPES[letter];
    }
    if (letter !== "u") invalid("invalid escape sequence");
    const unit = hex4(pos + 2);
    pos += 6;
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const low = /^\\u([dD][c-fC-F][0-9a-fA-F]{2})/.exec(text.slice(pos, pos + 6));
      if (low !== null) {
        pos += 6;
        return String.fromCharCode(unit, parseInt(low[1], 16));
      }
    }
    if (unit >= 0xd800 && unit <= 0xdfff) {
      throw new CommitError("lone_surrogate", "a string has a lone surrogate");
    }
    return String.fromCharCode(unit);
  }

  skip();
  const result = value(0);
  skip();
  if (pos !== text.length) invalid("trailing data after the JSON value");
  return result;
}

/** ECMAScript Number::toString, which is RFC 8785's number text; -0 gives "0". */
export function numberText(x) {
  if (!Number.isFinite(x)) throw new CommitError("number_out_of_range", "JSON numbers are finite");
  return Object.is(x, -0) ? "0" : String(x);
}

function stringText(value) {
  let out = '"';
  for (const char of value) {
    const code = char.codePointAt(0);
    if (char === '"' || char === "\\") out += "\\" + char;
    else if (char === "\b") out += "\\b";
    else if (char === "\t") out += "\\t";
    else if (char === "\n") out += "\\n";
    else if (char === "\f") out += "\\f";
    else if (char === "\r") out += "\\r";
    else if (code < 0x20) out += "\\u" + code.toString(16).padStart(4, "0");
    else out += char;
  }
  return out + '"';
}

/** RFC 8785 text of a parsed value: members sorted by UTF-16 code units (JavaScript's own
 * string order), no whitespace. */
export function serialize(value) {
  if (value === null) return "null";
  if (value === true) return "true";
  if (value === false) return "false";
  if (value instanceof JsonNumber) return numberText(value.value);
  if (typeof value === "number") return numberText(value);
  if (typeof value === "string") return stringText(value);
  if (Array.isArray(value)) return "[" + value.map(serialize).join(",") + "]";
  const names = Object.keys(value).sort();
  return "{" + names.map((name) => stringText(name) + ":" + serialize(value[name])).join(",") + "}";
}

/** canonicalize(bytes) of docs/spec.md: parse strictly, write RFC 8785. */
export function canonicalize(bytes) {
  return serialize(parse(decodeUtf8(bytes)));
}
