// Build the committed bundle (CodeMirror 6, markdown-it, DOMPurify): static/vendor/codemirror/ (served as /static/vendor/codemirror/)
//   codemirror.esm.min.js  one ES module, with a banner naming every bundled package and its licence
//   versions.json          {"packages": {name: version}, "esbuild": version}: what was actually bundled
//   LICENSES.txt           the full licence text of every bundled package
//
// Reproducible: the same package-lock.json gives byte-identical files
// (`rm -rf node_modules && npm ci && npm run build`, then compare sha256). Node is needed only here,
// never to install, run or test the playground (tests/unit/test_vendor_bundle.py checks the
// committed files against package-lock.json and src/editor.js without Node).

import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const outDir = join(here, "static", "vendor", "codemirror");
const bundleName = "codemirror.esm.min.js";

function packageOf(inputPath) {
  // "node_modules/@codemirror/view/dist/index.js" -> "@codemirror/view"
  const parts = inputPath.split("/");
  const at = parts.lastIndexOf("node_modules");
  if (at < 0) return null;
  const first = parts[at + 1];
  return first.startsWith("@") ? `${first}/${parts[at + 2]}` : first;
}

function readPackage(name) {
  const dir = join(here, "node_modules", name);
  const meta = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  // Every licence file (DOMPurify ships one per licence it offers; punycode.js names its LICENSE-MIT.txt).
  const licenseFiles = readdirSync(dir)
    .sort()
    .filter((f) => /^(licen[cs]e|copying)([-.][\w.-]+)?$/i.test(f));
  if (!licenseFiles.length) throw new Error(`${name}: no licence file found`);
  const text = licenseFiles.map((f) => readFileSync(join(dir, f), "utf8").trim()).join(`\n\n${"-".repeat(78)}\n\n`);
  return { name, version: meta.version, license: meta.license, text };
}

const result = await esbuild.build({
  entryPoints: [join(here, "src", "editor.js")],
  bundle: true,
  format: "esm",
  minify: true,
  target: "es2020",
  charset: "utf8",
  legalComments: "none",
  metafile: true,
  write: false,
  absWorkingDir: here,
  logLevel: "warning",
});

const names = [...new Set(Object.keys(result.metafile.inputs).map(packageOf).filter(Boolean))].sort();
const packages = names.map(readPackage);
// The entry file's hash goes into the banner and versions.json, so a test (without Node) can tell
// when src/editor.js changed but the committed bundle was not rebuilt.
const sourceSha = createHash("sha256").update(readFileSync(join(here, "src", "editor.js"))).digest("hex");
const banner =
  "/*! Pallas Playground bundle: CodeMirror 6, markdown-it, DOMPurify and their dependencies, built by frontend/build.mjs\n" +
  ` * with esbuild ${esbuild.version} from frontend/package-lock.json. Licences: LICENSES.txt beside this file.\n` +
  ` * entry frontend/src/editor.js sha256 ${sourceSha}\n` +
  packages.map((p) => ` * ${p.name}@${p.version} ${p.license}\n`).join("") +
  " */\n";
const code = banner + result.outputFiles[0].text;
const versions = {
  packages: Object.fromEntries(packages.map((p) => [p.name, p.version])),
  esbuild: esbuild.version,
  entry_sha256: sourceSha,
};
const licenses = packages
  .map((p) => `${"=".repeat(78)}\n${p.name}@${p.version} (${p.license})\n${"=".repeat(78)}\n\n${p.text}\n`)
  .join("\n");

if (!existsSync(outDir)) mkdirSync(outDir, { recursive: true });
const files = {
  [bundleName]: code,
  "versions.json": JSON.stringify(versions, null, 2) + "\n",
  "LICENSES.txt": licenses,
};
for (const [name, text] of Object.entries(files)) {
  writeFileSync(join(outDir, name), text);
  const sha = createHash("sha256").update(text).digest("hex");
  console.log(`${name.padEnd(24)} ${String(Buffer.byteLength(text)).padStart(8)} B  sha256 ${sha}`);
}
console.log(`wrote ${outDir}: ${packages.length} packages`);
