"""The class grid as CSV (`GET /api/classes/{id}/progress.csv`), safe to open in a spreadsheet: the
one CSV the server writes (students' nicknames and run headlines are theirs to choose).

A cell a spreadsheet would evaluate is escaped with a single quote (OWASP, "CSV Injection"): one whose
text starts with a formula character once its compatibility forms are folded (NFKC: the full-width
`＝`, the small `﹦` and `﹢`, the superscript `⁺` and `⁼` are `=`, `=`, `+`, `+` and `=`, and some
spreadsheets fold them so too) and its leading blanks and invisible characters are skipped (a
spreadsheet may read past them), or one that starts with a tab or a line break.
"""

from __future__ import annotations

import csv
import io
import unicodedata

from server.wire.classes import ClassProgress

# What starts a formula (a pipe: a DDE call in some spreadsheets), after folding and leading blanks.
FORMULA_STARTS = ("=", "+", "-", "@", "|")
# What a cell may not start with at all (OWASP: a tab or a carriage return; a line feed too).
BREAKS = ("\t", "\r", "\n")


def csv_cell(value: str) -> str:
    """A cell as text a spreadsheet shows and never evaluates (see the module's docstring)."""
    folded = unicodedata.normalize("NFKC", value)
    risky = value.startswith(BREAKS) or folded.startswith(BREAKS) or _lead(folded).startswith(FORMULA_STARTS)
    return "'" + value if risky else value


def _lead(text: str) -> str:
    """`text` from its first character that is neither blank nor invisible (control, format)."""
    for place, char in enumerate(text):
        if not (char.isspace() or unicodedata.category(char).startswith("C")):
            return text[place:]
    return ""


class _SafeWriter:
    def __init__(self, out: io.StringIO) -> None:
        # Every cell quoted too, as OWASP recommends: a separator inside a cell cannot start a new one.
        self.writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)

    def writerow(self, row: list[str]) -> None:
        self.writer.writerow([csv_cell(cell) for cell in row])


def progress_csv(progress: ClassProgress) -> str:
    """The grid as CSV: one row per student, a status and a headline column per step."""
    out = io.StringIO()
    writer = _SafeWriter(out)
    steps = range(1, progress.steps + 1)
    assignments = {s.step for s in progress.setup if s.kind == "assignment"}
    header = ["student"]
    for k in steps:
        header += [
            f"step {k} status",
            f"step {k} headline",
            *([f"step {k} late"] if k in assignments else []),
        ]
    writer.writerow(header)
    for student in progress.students:
        row = [student.name]
        for k in steps:
            cell = student.steps.get(str(k))
            row += [cell.status, cell.headline] if cell else ["not started", ""]
            if k in assignments:
                row.append("late" if cell and cell.late else "")
        writer.writerow(row)
    return out.getvalue()
