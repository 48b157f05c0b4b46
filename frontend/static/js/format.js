// Number formatting for results. Non-finite floats arrive as the strings "nan", "inf", "-inf".

const DASH = "—";

export function isNum(v) {
  return typeof v === "number" && Number.isFinite(v);
}

/** A float in 3 significant digits (scientific when tiny or huge); strings pass through. */
export function num(v, digits = 3) {
  if (v === null || v === undefined) return DASH;
  if (typeof v === "string") return v;
  if (!Number.isFinite(v)) return String(v);
  if (v === 0) return "0";
  const a = Math.abs(v);
  const rounded = Number(v.toPrecision(digits));
  if (a < 1e-3 || a >= 1e6) return rounded.toExponential();
  return String(rounded);
}

export function count(n) {
  return isNum(n) ? n.toLocaleString("en-US") : DASH;
}

export function seconds(v) {
  if (!isNum(v)) return typeof v === "string" ? v : DASH;
  const a = Math.abs(v);
  if (a === 0) return "0 s";
  if (a < 1e-6) return `${num(v * 1e9)} ns`;
  if (a < 1e-3) return `${num(v * 1e6)} µs`;
  if (a < 1) return `${num(v * 1e3)} ms`;
  return `${num(v)} s`;
}

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

export function bytes(v) {
  if (!isNum(v)) return DASH;
  let value = v;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${Number(value.toPrecision(3))} ${UNITS[unit]}`;
}

export function percent(used, capacity) {
  if (!isNum(used) || !isNum(capacity) || capacity <= 0) return DASH;
  const p = (100 * used) / capacity;
  if (p === 0) return "0%";
  if (p < 0.1) return "<0.1%";
  return `${Number(p.toPrecision(p < 10 ? 2 : 3))}%`;
}

export function ratio(v) {
  return isNum(v) ? `${Number(v.toPrecision(3))}×` : DASH;
}

export function shape(dims) {
  if (!Array.isArray(dims)) return DASH;
  return dims.length ? dims.join("×") : "scalar";
}

export function flops(v) {
  if (!isNum(v)) return DASH;
  const units = [["T", 1e12], ["G", 1e9], ["M", 1e6], ["k", 1e3]];
  for (const [u, f] of units) if (Math.abs(v) >= f) return `${Number((v / f).toPrecision(3))} ${u}FLOP`;
  return `${v} FLOP`;
}
