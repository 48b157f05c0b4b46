// The editor's file on disk: download it as a .py, open a .py from disk.

/** A file name for the editor's content: the entry's slug (or "kernel") plus .py. */
export function fileName(entry) {
  const base = String(entry || "kernel").replace(/[^A-Za-z0-9_.-]+/g, "_").replace(/^[._]+/, "") || "kernel";
  return `${base}.py`;
}

/** Offer `text` as a download named `name`. */
export function download(text, name) {
  const url = URL.createObjectURL(new Blob([text], { type: "text/x-python;charset=utf-8" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** Call `onFile(text, name)` whenever a file is picked in `input` (type=file); `maxBytes` refuses big ones. */
export function wireUpload(input, onFile, onRefused, maxBytes = 65536) {
  input.addEventListener("change", async () => {
    const [file] = input.files;
    input.value = "";
    if (!file) return;
    if (file.size > maxBytes) {
      onRefused(`${file.name} is ${file.size.toLocaleString()} bytes; the playground takes files up to ${maxBytes.toLocaleString()} bytes.`);
      return;
    }
    onFile(await file.text(), file.name);
  });
}
