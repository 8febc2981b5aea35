"""vllmlint: static analysis for vLLM deployments."""
import sys as _sys

__version__ = "0.1.0"


def _forget_the_current_folder() -> None:
    """`python -m vllmlint` puts the current folder first on sys.path, and the current folder is usually the tree
    being linted: its `json.py`, `re.py` or `yaml.py` would be imported in place of the real module the first time
    vllmlint imports it, and run. While this package is imported for `-m` (sys.argv[0] is then "-m"), that entry
    is dropped, unless it is the folder this package itself was found in (a source checkout). What Python imported
    before this point (runpy's own imports) is out of reach: the console script `vllmlint`, `python -P` or
    `python -I` never add the entry (docs/security.md)."""
    if _sys.argv[:1] != ["-m"] or getattr(_sys.flags, "safe_path", False) or not _sys.path:
        return
    if _module_run() not in ("vllmlint", "vllmlint.__main__", "vllmlint.cli"):
        return  # another program's `-m`, importing vllmlint: its sys.path is its own business
    import os  # imported at start-up already: no file of the current folder can stand in for it

    first = _sys.path[0]
    try:
        here = os.getcwd()
        own = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
        if os.path.realpath(first or here) == os.path.realpath(here) and os.path.realpath(here) != own:
            del _sys.path[0]
    except OSError:  # the current folder was removed: nothing can be imported from it
        pass


def _module_run() -> str | None:
    """The module `python -m MODULE` names, from the interpreter's own command line (sys.orig_argv)."""
    words = getattr(_sys, "orig_argv", [])
    index = 1
    while index < len(words):
        word = words[index]
        if word == "-m":
            return words[index + 1] if index + 1 < len(words) else None
        if word.startswith("-m"):
            return word[2:]
        if word == "-c" or not word.startswith("-"):
            return None
        index += 2 if word in ("-W", "-X", "--check-hash-based-pycs") else 1  # options with a value
    return None


_forget_the_current_folder()


def _bundle() -> None:
    """A wheel's modules from one file (`vllmlint/bundle.py`); nothing in a checkout."""
    try:
        from vllmlint.bundle import install

        install(__path__[0])
    except Exception:  # never a reason not to import: the usual import reads every module
        pass


_bundle()
