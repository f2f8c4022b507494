// Field kinds and enc(value) (docs/spec.md section 3). Checks in the spec's order: the kind is
// known; a number is finite and within ±(2^53 - 1); the value has the kind's JSON type; the
// kind's own rule. Values are parsed JSON: numbers, strings, booleans, null, {} and [].

import { CURRENCIES } from "./currencies.js";
import { CommitError, numberText } from "./json.js";

export const KINDS = [
  "boolean", "currency", "date", "decimal", "digest", "free", "integer",
  "lat6", "lat9", "lon6", "money", "text", "timestamp", "uuid",
];

const valueType = (kind, takes, field) =>
  new CommitError("value_type", `kind ${kind} takes ${takes}`, field);

function free(value, field) {
  if (typeof value === "number") return "num:" + numberText(value);
  if (typeof value === "string") return "str:" + value;
  if (typeof value === "boolean") return `bool:${value}`;
  if (value === null) return "null:";
  if (Array.isArray(value)) {
    if (value.length === 0) return "arr:[]";
  } else if (Object.keys(value).length === 0) return "obj:{}";
  throw valueType("free", "a JSON scalar, an empty object or an empty array", field);
}

const whole = (code, tag) => (number, field) => {
  if (!Number.isInteger(number)) throw new CommitError(code, `kind ${tag} takes a whole number`, field);
  return `${tag}:${numberText(number)}`;
};

/** The shortest decimal text of `x`, rounded half to even to `decimals` places (spec 3.4). */
export function coordinateText(x, decimals) {
  const [mantissa, exponent = "0"] = String(Math.abs(x)).split("e");
  const [whole, fraction = ""] = mantissa.split(".");
  let digits = whole + fraction;
  let point = whole.length + Number(exponent); // digits before the decimal point
  if (point < 0) {
    digits = "0".repeat(-point) + digits;
    point = 0;
  }
  const keep = point + decimals;
  digits = digits.padEnd(keep + 1, "0");
  let kept = BigInt(digits.slice(0, keep));
  const [first, tail] = [digits[keep], digits.slice(keep + 1).replace(/0+$/, "")];
  if (first > "5" || (first === "5" && (tail !== "" || kept % 2n === 1n))) kept += 1n;
  const text = kept.toString().padStart(decimals + 1, "0");
  const sign = x < 0 && kept !== 0n ? "-" : "";
  return `${sign}${text.slice(0, -decimals)}.${text.slice(-decimals)}`;
}

const coordinate = (tag, limit, decimals) => (number, field) => {
  if (!(number >= -limit && number <= limit)) {
    const message = `kind ${tag} takes a number from -${limit} to ${limit}`;
    throw new CommitError("coordinate_out_of_range", message, field);
  }
  return `${tag}:${coordinateText(number, decimals)}`;
};

const NUMBER_RULES = {
  decimal: (number) => "dec:" + numberText(number),
  integer: whole("not_integer", "int"),
  lat6: coordinate("lat6", 90, 6),
  lat9: coordinate("lat9", 90, 9),
  lon6: coordinate("lon6", 180, 6),
  money: whole("money_fraction", "money"),
};

const isLeapYear = (year) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);

export function daysInMonth(year, month) {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

export const isDate = (year, month, day) =>
  month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);

const DATE = "([0-9]{4})-([0-9]{2})-([0-9]{2})";
const TIMESTAMP = new RegExp(
  `^${DATE}[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\\.([0-9]+))?(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))$`,
);
const HYPHENATED = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";
const UUID = new RegExp(
  `^(?:(${HYPHENATED})|\\{(${HYPHENATED})\\}|[uU][rR][nN]:[uU][uU][iI][dD]:(${HYPHENATED})|([0-9a-fA-F]{32}))$`,
);

function date(text, field) {
  const match = new RegExp(`^${DATE}$`).exec(text);
  if (match === null || !isDate(+match[1], +match[2], +match[3])) {
    throw new CommitError("date_invalid", "kind date takes an existing date YYYY-MM-DD", field);
  }
  return "date:" + text;
}

function shiftDay(year, month, day, shift) {
  if (shift > 0) {
    if (day < daysInMonth(year, month)) return [year, month, day + 1];
    return month < 12 ? [year, month + 1, 1] : [year + 1, 1, 1];
  }
  if (shift < 0) {
    if (day > 1) return [year, month, day - 1];
    if (month > 1) return [year, month - 1, daysInMonth(year, month - 1)];
    return [year - 1, 12, 31];
  }
  return [year, month, day];
}

const pad = (number, width = 2) => String(number).padStart(width, "0");

function timestamp(text, field) {
  const refusal = new CommitError(
    "timestamp_invalid", "kind timestamp takes an RFC 3339 date-time (seconds 00-59)", field,
  );
  const match = TIMESTAMP.exec(text);
  if (match === null) throw refusal;
  let [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  const [fraction = "", sign, offsetHour, offsetMinute] = match.slice(7);
  if (!(isDate(year, month, day) && hour <= 23 && minute <= 59 && second <= 59)) throw refusal;
  let offset = 0;
  if (sign !== undefined) {
    if (+offsetHour > 23 || +offsetMinute > 59) throw refusal;
    offset = (+offsetHour * 60 + +offsetMinute) * (sign === "+" ? 1 : -1);
  }
  const local = hour * 60 + minute - offset;
  const minutes = ((local % 1440) + 1440) % 1440;
  [year, month, day] = shiftDay(year, month, day, Math.floor(local / 1440));
  if (year < 1 || year > 9999) throw refusal;
  const kept = fraction.replace(/0+$/, "");
  return (
    `time:${pad(year, 4)}-${pad(month)}-${pad(day)}T${pad(Math.floor(minutes / 60))}:` +
    `${pad(minutes % 60)}:${pad(second)}${kept ? "." + kept : ""}Z`
  );
}

function uuid(text, field) {
  const match = UUID.exec(text);
  if (match === null) {
    const message = "kind uuid takes 8-4-4-4-12 hexadecimal digits, braced, urn:uuid: or bare";
    throw new CommitError("uuid_invalid", message, field);
  }
  const d = match.slice(1).find(Boolean).replaceAll("-", "").toLowerCase();
  return `uuid:${d.slice(0, 8)}-${d.slice(8, 12)}-${d.slice(12, 16)}-${d.slice(16, 20)}-${d.slice(20)}`;
}

function currency(text, field) {
  if (!/^[A-Za-z]{3}$/.test(text) || !CURRENCIES.has(text.toUpperCase())) {
    throw new CommitError("currency_invalid", "kind currency takes an ISO 4217 alphabetic code", field);
  }
  return "cur:" + text.toUpperCase();
}

function digest(text, field) {
  const match = /^sha256:([0-9a-fA-F]{64})$/.exec(text);
  if (match === null) {
    throw new CommitError("digest_invalid", "kind digest takes sha256: and 64 hexadecimal digits", field);
  }
  return "digest:sha256:" + match[1].toLowerCase();
}

const STRING_RULES = {
  currency, date, digest, timestamp, uuid,
  text: (text) => "txt:" + text.normalize("NFC"),
};

/** enc(value) as text (its UTF-8 bytes are what is committed); CommitError with `field`. */
export function encodeValue(kind, value, field = null) {
  if (!KINDS.includes(kind)) {
    throw new CommitError("unknown_kind", `unknown field kind; the kinds are ${KINDS.join(", ")}`, field);
  }
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new CommitError("number_out_of_range", "a JSON number must be finite", field);
    if (Math.abs(value) > Number.MAX_SAFE_INTEGER) {
      throw new CommitError("integer_out_of_range", "number magnitude above 2^53-1", field);
    }
  }
  if (typeof value === "string" && (kind === "free" || kind in STRING_RULES) && !value.isWellFormed()) {
    throw new CommitError("lone_surrogate", "a string holds a lone surrogate", field);
  }
  if (kind === "free") return free(value, field);
  if (kind in NUMBER_RULES) {
    if (typeof value !== "number") throw valueType(kind, "a number", field);
    return NUMBER_RULES[kind](value, field);
  }
  if (kind in STRING_RULES) {
    if (typeof value !== "string") throw valueType(kind, "a string", field);
    return STRING_RULES[kind](value, field);
  }
  if (typeof value !== "boolean") throw valueType(kind, "a boolean", field);
  return `bool:${value}`;
}
