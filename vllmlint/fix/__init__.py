"""`--fix`: `edits` holds the primitives checks build fixes from (Fix, Edit, the argv editor), `apply`
the driver that applies them, verifies the result and writes files (`run_fixes`). Checks import only
`edits`, so linting without `--fix` never loads the driver."""
