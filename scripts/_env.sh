# Shared by scripts/serve and scripts/test: find Python 3.12, make .venv, install pinned packages.
# Sourced, not run. Idempotent and quick when nothing changed (a stamp records what was installed).

find_python() {
    local candidate
    for candidate in "${PYTHON:-}" python3.12 python3; do
        [ -n "$candidate" ] || continue
        if command -v "$candidate" >/dev/null 2>&1 &&
            "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' >/dev/null 2>&1; then
            command -v "$candidate"; return 0
        fi
    done
    # pyenv installs a 3.12 without always putting it on PATH.
    for candidate in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3.12; do
        [ -x "$candidate" ] && { echo "$candidate"; return 0; }
    done
    echo "error: Python 3.12 not found (JAX 0.12 needs Python >= 3.12); set PYTHON=/path/to/python3.12" >&2
    return 1
}

ensure_venv() {  # $1: pip extras, e.g. "test"
    local extras="$1" python stamp want
    if [ ! -x .venv/bin/python ]; then
        python=$(find_python)
        echo "creating .venv with $python"
        "$python" -m venv .venv
    fi
    want=$(cat pyproject.toml constraints.txt | sha256sum | cut -c1-16)-$extras
    stamp=.venv/.playground-installed
    if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
        echo "installing pinned Python packages into .venv (extras: ${extras:-none})"
        .venv/bin/python -m pip install -q --disable-pip-version-check -c constraints.txt -e ".${extras:+[$extras]}"
        echo "$want" > "$stamp"
    fi
}
