"""What a verdict was checked against, in the words `RunResult.checked_by` carries (the page shows them,
and the class board ranks only verdicts of a lesson's own reference: `server.classroom.board`)."""

CHECKED_BY_CATALOG = "the catalog entry's reference, computed and compared outside your kernel's process"
CHECKED_BY_LESSON = (
    "the lesson's reference (its step's `make_inputs` and `reference`), computed and compared outside your "
    "kernel's process"
)
CHECKED_BY_AUTHOR = (
    "the author's own reference (this file's `reference`), computed and compared outside the kernel's process"
)
CHECKED_BY_AUTHOR_KEPT = (
    "the author's own reference (this file's `reference`), computed outside the kernel's process by an "
    "earlier run of the same `make_inputs` and `reference` (only code they never run has changed since), "
    "and compared outside it"
)
