"""Subcommands that live in their own modules and are imported only when used (see check_options.COMMANDS)."""
