"""What an analysis does when a design breaks its rules: it says so, instead of tripping.

The simulator, the checker and the code generators run designs that have errors on purpose (a
witness shows what a wrong count does), but some errors leave nothing to run -- a member without a
pipeline config, a step naming a resource that is gone.  Inside ``on_errors`` a lookup that fails
on such a design becomes one ``DesignError`` that names the design's first error and its fix.
On a design without errors nothing is caught: a failure there is a bug and stays visible.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

from ..errors import DesignError, PgStudioError
from ..model.design import Design

#: What an analysis trips over on a design that breaks a rule (a missing key, an empty list, None).
TRIPS = (LookupError, TypeError, ValueError, AttributeError, ArithmeticError)


@contextlib.contextmanager
def on_errors(design: Design, what: str) -> Iterator[None]:
    """Run the body; if it trips on a design with errors, raise ``DesignError`` naming the first."""
    try:
        yield
    except PgStudioError:
        raise
    except TRIPS as exc:
        errors = [d for d in design.validate().diagnostics if d.is_error]
        if not errors:
            raise
        first = errors[0]
        raise DesignError(f"{what} cannot run design {design.name!r}: it has {len(errors)} error(s), the first "
                          f"[{first.code}] {first.message}", code="design.invalid",
                          hint=first.hint or "fix the errors Design.validate() lists") from exc


__all__ = ["TRIPS", "on_errors"]
