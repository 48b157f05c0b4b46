"""What a scratch file's reference's job can run, read from its source: the key its result is kept by.

A scratch file's reference's job imports the file and calls its `make_inputs` and `reference`
(`sandbox.harness.reference`), never `kernel`. A learner iterating on a kernel changes function
bodies that job never calls; keying its result by the whole source would make every edit pay for the
reference's job again (a process, the file's import, compiles of `make_inputs` and `reference`).
`reference_text` is the file with the bodies of the top-level functions that job cannot reach
replaced by `pass` (their signatures, defaults and decorators stay: those run at import; every
other line stays where it was). That text is what the reference's job is given, and the key: two
files with the same text give the same reference's job, and nothing of a kernel's body reaches it.

Reading, never running (the source is hostile), and conservative where reading cannot tell:
- a function is reachable when its name appears anywhere in code that runs or may run: every
  top-level statement that is not a function definition, every decorator, default and annotation,
  `make_inputs`, `reference`, `TOLERANCE`, any dunder (a module `__getattr__` answers a missing
  `reference`), and, transitively, the body of every reachable function; as a name, an attribute, an
  import or a word in a string;
- a function whose name is bound more than once, or with a decorator other than `jax.jit` (with or
  without `functools.partial` and keyword arguments; `jax`, `functools`, `partial` bound only by
  their imports, no `jit` or `partial` attribute assigned), is kept whole: a decorator may call it;
- a file that reaches for names dynamically (`globals()`, `getattr`, `sys`, `inspect`, `eval`, ...,
  anywhere in its code), could read its own text (`open`, `os`, `__file__`, ...: the kernel's body
  would then be data the reference's job reads), star-imports, or does not parse is kept whole: its
  text is the source itself.
"""

from __future__ import annotations

import ast
import functools
import re

# Ways to reach a function without naming it; a file using any of them is never sliced.
DYNAMIC_NAMES = frozenset(
    {
        "globals", "locals", "vars", "eval", "exec", "compile", "getattr", "setattr", "delattr",
        "__dict__", "__import__", "__builtins__", "builtins", "importlib", "inspect", "sys", "gc",
        "ctypes", "types", "runpy", "pickle", "marshal", "dill", "cloudpickle", "__globals__",
        "__code__", "__closure__", "__wrapped__", "f_globals", "f_locals", "f_back", "_getframe",
        "__module__", "__subclasses__", "__self__", "__func__", "__doc__",
        # Ways to read the file's own text, kernel and all.
        "__file__", "__loader__", "__spec__", "__cached__", "linecache", "tokenize", "open", "io",
        "os", "pathlib", "Path", "fromfile", "loadtxt", "genfromtxt",
    }
)  # fmt: skip
# What the reference's job reads from the module by name.
READ_BY_THE_JOB = ("make_inputs", "reference", "TOLERANCE")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

Function = ast.FunctionDef | ast.AsyncFunctionDef


@functools.lru_cache(maxsize=32)  # asked several times per run (the memory cache, the pairing)
def reference_text(source: str) -> str:
    """`source` as its reference's job gets it (see the module docstring): the bodies it cannot reach
    replaced by `pass`, every line where it was (tracebacks keep their line numbers); the source
    itself when that cannot be told. The job is given this text, never the file, so nothing it does
    (however it reaches its own code: frames, `linecache`, `pkgutil`, a swapped `jax.jit`) can read
    a kernel's body: this text is all it can read, and it is the key its result is kept by."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source
    try:
        if _words(tree, strings=False) & DYNAMIC_NAMES or any(
            isinstance(n, ast.alias) and n.name == "*" for n in ast.walk(tree)
        ):
            return source
        unreachable = _unreachable(tree)
    except RecursionError:
        return source
    bodies = [n.body for n in tree.body if isinstance(n, Function) and n.name in unreachable]
    return _without(source, bodies)


def _without(source: str, bodies: list[list[ast.stmt]]) -> str:
    """`source` with each body replaced by `pass` and as many line breaks as it spanned, a comment
    ending its last line included (ast's offsets are in UTF-8 bytes, so the text is cut as bytes)."""
    lines = source.encode().splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    data = source.encode()
    out, at = [], 0
    for body in sorted(bodies, key=lambda b: (b[0].lineno, b[0].col_offset)):
        first, last = body[0], body[-1]
        if last.end_lineno is None or last.end_col_offset is None:
            return source
        # A decorated first statement starts at its first decorator's `@`, above the line ast names.
        decorators = getattr(first, "decorator_list", None)
        row, col = (
            (decorators[0].lineno, decorators[0].col_offset - 1)
            if decorators
            else (first.lineno, first.col_offset)
        )
        begin = starts[row - 1] + col
        end = starts[last.end_lineno - 1] + len(lines[last.end_lineno - 1].rstrip(b"\r\n"))
        out += [data[at:begin], b"pass", b"\n" * (last.end_lineno - row)]
        at = end
    out.append(data[at:])
    return b"".join(out).decode()


def _unreachable(tree: ast.Module) -> set[str]:
    """Names of top-level functions whose bodies the reference's job cannot run."""
    bound = _bindings(tree)
    jit_is_jax = not any(
        isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load) and n.attr in {"jit", "partial"}
        for n in ast.walk(tree)
    )
    candidates: dict[str, Function] = {
        node.name: node
        for node in tree.body
        if isinstance(node, Function)
        and len(bound.get(node.name, ())) == 1
        and not (node.name.startswith("__") and node.name.endswith("__"))
        and node.name not in READ_BY_THE_JOB
        and all(jit_is_jax and _is_jit(d, bound) for d in node.decorator_list)
    }
    reached = set(READ_BY_THE_JOB)
    for node in tree.body:
        if isinstance(node, Function) and node.name in candidates:
            reached |= _words_of(_signature_parts(node))  # run at import, whether or not it is called
        else:
            reached |= _words(node)  # runs at import, or is a body that may run
    expanded: set[str] = set()
    while True:
        newly = (set(candidates) & reached) - expanded
        if not newly:
            return set(candidates) - expanded
        for name in newly:
            reached |= _words_of(candidates[name].body)
        expanded |= newly


def _signature_parts(node: Function) -> list[ast.AST]:
    parts: list[ast.AST] = [*node.decorator_list, node.args]
    if node.returns is not None:
        parts.append(node.returns)
    return parts


# A decorator's leading name, and the one import that must be its only binding.
_IMPORTED_AS = {"jax": "jax", "functools": "functools", "partial": "functools.partial"}


def _is_jit(decorator: ast.expr, bound: dict[str, list[str]]) -> bool:
    """`jax.jit` or `functools.partial(jax.jit, <keywords>)`, each leading name bound once, by its import."""

    def imported(dotted: str) -> bool:
        head = dotted.split(".")[0]
        ways = bound.get(head, [])
        return head in _IMPORTED_AS and bool(ways) and all(w == _IMPORTED_AS[head] for w in ways)

    if isinstance(decorator, ast.Call):
        wrapper = _dotted(decorator.func)
        return (
            wrapper in {"functools.partial", "partial"}
            and imported(wrapper)
            and len(decorator.args) == 1
            and _is_jit(decorator.args[0], bound)
            and all(k.arg is not None for k in decorator.keywords)
        )
    return _dotted(decorator) == "jax.jit" and imported("jax")


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def _bindings(tree: ast.Module) -> dict[str, list[str]]:
    """What binds each name, anywhere in the file (a nested `global` can rebind one): the imported
    module or `module.name` for an import, "" for anything else."""
    found: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.setdefault(node.name, []).append("")
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            found.setdefault(node.id, []).append("")
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                found.setdefault(name, []).append("")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                name = alias.asname or alias.name.split(".")[0]
                if isinstance(node, ast.ImportFrom):
                    what = f"{node.module}.{alias.name}" if node.module and not node.level else ""
                else:  # `import jax.numpy` binds `jax` to jax; `import jax.numpy as jnp`, not
                    what = alias.name.split(".")[0] if alias.asname is None else alias.name
                found.setdefault(name, []).append(what)
    return found


def _words(node: ast.AST, *, strings: bool = True) -> set[str]:
    return _words_of([node], strings=strings)


def _words_of(nodes: list[ast.AST] | list[ast.stmt] | ast.arguments, *, strings: bool = True) -> set[str]:
    """Every identifier `nodes` mention: names, attributes, imports, keywords and (`strings`) words in
    strings. A word in a string reaches nothing by itself (a docstring may say "compile"), but
    `getattr`-like code can turn it into a function, so reachability counts them."""
    found: set[str] = set()
    for root in [nodes] if isinstance(nodes, ast.AST) else nodes:
        walked = list(ast.walk(root))
        # A string that is a statement of its own (a docstring) is read only through `__doc__`.
        docs = {id(n.value) for n in walked if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
        for node in walked:
            if id(node) in docs:
                continue
            if isinstance(node, ast.Name):
                found.add(node.id)
            elif isinstance(node, ast.Attribute):
                found.add(node.attr)
            elif isinstance(node, ast.alias):
                found.update(_WORD.findall(node.name))
                if node.asname:
                    found.add(node.asname)
            elif isinstance(node, ast.keyword) and node.arg:
                found.add(node.arg)
            elif strings and isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
                text = node.value if isinstance(node.value, str) else node.value.decode("latin-1")
                found.update(_WORD.findall(text))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.add(node.name)
            elif isinstance(node, ast.arg):
                found.add(node.arg)
    return found
