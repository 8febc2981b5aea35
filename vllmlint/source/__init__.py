"""Reading each input language once: YAML (with positions), shell, Markdown."""
