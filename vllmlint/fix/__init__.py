"""`--fix`: `edits` holds the primitives checks build fixes from (Fix, Edit, the argv editor), `apply`
the driver that applies them, verifies the result and writes files (`run_fixes`). Checks import only
`edits`, so linting without `--fix` never loads the driver. The primitives are also importable from
the package itself (`from vllmlint.fix import Fix`, as type annotations do)."""
from vllmlint.fix.edits import (SAFE, UNSAFE, ArgvEditor, Edit, Fix, Keep, Word, argv_editor, drop_options_fix,
                                make_fix, replace_number, replace_scalar)

__all__ = ["SAFE", "UNSAFE", "ArgvEditor", "Edit", "Fix", "Keep", "Word", "argv_editor", "drop_options_fix",
           "make_fix", "replace_number", "replace_scalar"]
