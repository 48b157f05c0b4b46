// Where a result points in the user's file: the line an error was raised at, the line the TPU
// compiler rejected, the lines of racing accesses. The playground and the embed mark these lines in
// the editor (`sourceMarks`); the result view links to them.

/** The name the user's file has in tracebacks and race reports. */
export const USER_FILE = "kernel.py";

/**
 * The line of the user's file an error points at (the innermost frame in kernel.py), or null. An
 * exercise's `todo()` helper raises for the hole that called it, so the hole's line is the one.
 */
export function userLine(error) {
  if (!error) return null;
  const frames = [...String(error.traceback || "").matchAll(/File "([^"]+)", line (\d+)(?:, in (\S+))?/g)];
  const mine = frames.filter((f) => f[1] === USER_FILE && f[3] !== "todo");
  if (mine.length) return Number(mine[mine.length - 1][2]);
  return frames.length ? null : (error.line ?? null);
}

/** The lines of the user's file a result points at: where it raised, where accesses raced. */
export function sourceMarks(result) {
  const marks = [];
  const line = userLine(result.error);
  if (line) marks.push({ line, kind: "error", message: `${result.error.type}: ${result.error.message}` });
  if (result.lowering?.lowers === false && result.lowering.error?.line) {
    const e = result.lowering.error;
    marks.push({ line: e.line, kind: "error", message: `rejected by the TPU compiler: ${e.message}` });
  }
  for (const c of result.cases || []) {
    for (const race of c.races || []) {
      for (const a of race.accesses || []) {
        if (a.file === USER_FILE && a.line) marks.push({ line: a.line, kind: "race", message: `data race: ${a.kind} of ${a.buffer} ${a.region} by ${a.by}` });
      }
    }
  }
  return marks;
}
