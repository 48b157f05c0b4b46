// Build the committed bundle (CodeMirror 6, markdown-it, DOMPurify): static/vendor/codemirror/ (served as /static/vendor/codemirror/)
//   codemirror.esm.min.js  the editor (src/editor.js): what the page needs before it is interactive
//   diff.esm.min.js        the merge view (src/diff.js), imported by the page's diff dialog when it opens
//   markdown.esm.min.js    markdown-it and DOMPurify (src/markdown.js), imported when Markdown is first shown
//   chunk-<hash>.js        code the entries share (esbuild's splitting), named by its content
//   each file starts with a banner naming the packages bundled into it and their licences
//   versions.json          {"packages": {name: version}, "esbuild": version, "sources": {file: sha256}}
//   LICENSES.txt           the full licence text of every bundled package
//
// Reproducible: the same package-lock.json gives byte-identical files
// (`rm -rf node_modules && npm ci && npm run build`, then compare sha256). Node is needed only here,
// never to install, run or test the playground (tests/unit/test_vendor_bundle.py checks the
// committed files against package-lock.json and src/*.js without Node).

import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const outDir = join(here, "static", "vendor", "codemirror");
// Output name (without .js) → source: the editor keeps the bundle's old name, so the page's imports stay.
const entries = { "codemirror.esm.min": "editor.js", "diff.esm.min": "diff.js", "markdown.esm.min": "markdown.js" };

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
  entryPoints: Object.fromEntries(Object.entries(entries).map(([out, src]) => [out, join(here, "src", src)])),
  bundle: true,
  splitting: true,
  format: "esm",
  minify: true,
  target: "es2020",
  charset: "utf8",
  legalComments: "none",
  metafile: true,
  write: false,
  outdir: outDir,
  chunkNames: "chunk-[hash]",
  absWorkingDir: here,
  logLevel: "warning",
});

const packagesIn = (inputs) => [...new Set(Object.keys(inputs).map(packageOf).filter(Boolean))].sort();
// What is in some output file (a package esbuild read but shook out entirely is not bundled).
const names = [...new Set(Object.values(result.metafile.outputs).flatMap((o) => packagesIn(o.inputs)))].sort();
const packages = names.map(readPackage);
const byName = Object.fromEntries(packages.map((p) => [p.name, p]));
// The sources' hashes go into the banners and versions.json, so a test (without Node) can tell
// when a file of src/ changed but the committed bundle was not rebuilt.
const sources = readdirSync(join(here, "src")).sort();
const sourceSha = Object.fromEntries(
  sources.map((f) => [`src/${f}`, createHash("sha256").update(readFileSync(join(here, "src", f))).digest("hex")]),
);
const banner = (file, bundled) =>
  `/*! Pallas Playground bundle: ${file}, built by frontend/build.mjs\n` +
  ` * with esbuild ${esbuild.version} from frontend/package-lock.json. Licences: LICENSES.txt beside this file.\n` +
  Object.entries(sourceSha).map(([f, sha]) => ` * source frontend/${f} sha256 ${sha}\n`).join("") +
  bundled.map((name) => ` * ${name}@${byName[name].version} ${byName[name].license}\n`).join("") +
  " */\n";
const bundles = Object.fromEntries(
  result.outputFiles.map((f) => {
    const file = basename(f.path);
    const bundled = packagesIn(result.metafile.outputs[`static/vendor/codemirror/${file}`].inputs);
    return [file, banner(file, bundled) + f.text];
  }),
);
const versions = {
  packages: Object.fromEntries(packages.map((p) => [p.name, p.version])),
  esbuild: esbuild.version,
  sources: sourceSha,
};
const licenses = packages
  .map((p) => `${"=".repeat(78)}\n${p.name}@${p.version} (${p.license})\n${"=".repeat(78)}\n\n${p.text}\n`)
  .join("\n");

// Old chunks go: the directory holds exactly what this build wrote.
if (existsSync(outDir)) for (const f of readdirSync(outDir)) if (f.startsWith("chunk-")) rmSync(join(outDir, f));
if (!existsSync(outDir)) mkdirSync(outDir, { recursive: true });
const files = {
  ...bundles,
  "versions.json": JSON.stringify(versions, null, 2) + "\n",
  "LICENSES.txt": licenses,
};
for (const [name, text] of Object.entries(files)) {
  writeFileSync(join(outDir, name), text);
  const sha = createHash("sha256").update(text).digest("hex");
  console.log(`${name.padEnd(24)} ${String(Buffer.byteLength(text)).padStart(8)} B  sha256 ${sha}`);
}
console.log(`wrote ${outDir}: ${packages.length} packages`);
