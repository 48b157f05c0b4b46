"""Who may read or change a class: the teacher (`Authorization: Bearer <teacher token>`) or one of its
students (`Bearer <student token>`); anyone else gets 401 (no token), 403 (another's) or 404."""

from __future__ import annotations

from server.problems import ProblemError
from server.store.classes import ClassSession, ClassStore, ClassTokenError, Student, UnknownClassError


def bearer(authorization: str, who: str) -> str:
    """The token of `Authorization: Bearer <token>`, or 401 naming whose token is needed."""
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        where = "from the teacher link" if who == "teacher" else "from joining the class"
        raise ProblemError(
            401,
            f"{who.capitalize()} token needed",
            f"send the class's {who} token as `Authorization: Bearer <token>` ({where})",
            headers={"WWW-Authenticate": 'Bearer realm="class"'},
        )
    return token.strip()


def student_of(store: ClassStore, class_id: str, authorization: str) -> Student:
    """The student whose token `authorization` carries, if they are in class `class_id`: else 401/403."""
    student = store.student(bearer(authorization, "student"))
    if student is None or student.class_id != class_id:
        raise ProblemError(
            403, "Not in this class", f"the token is not a current student's of class {class_id!r}"
        )
    return student


def teacher_session(store: ClassStore, class_id: str, authorization: str) -> ClassSession:
    """The class, if `authorization` is `Bearer <its teacher token>`: else 401, 403 or 404."""
    token = bearer(authorization, "teacher")
    try:
        return store.check_teacher(class_id, token)
    except UnknownClassError:
        raise ProblemError(404, "Unknown class", f"no class {class_id!r}") from None
    except ClassTokenError:
        raise ProblemError(
            403, "Not your class", f"the token is not class {class_id!r}'s teacher token"
        ) from None
