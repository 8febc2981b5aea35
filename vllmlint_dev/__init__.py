"""Maintainer tools (catalog sync, docs generation): not shipped in the wheel, never imported at run time."""
