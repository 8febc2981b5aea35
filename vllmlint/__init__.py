"""vllmlint: static analysis for vLLM deployments."""
__version__ = "0.1.0"


def _bundle() -> None:
    """A wheel's modules from one file (`vllmlint/bundle.py`); nothing in a checkout."""
    try:
        from vllmlint.bundle import install

        install(__path__[0])
    except Exception:  # never a reason not to import: the usual import reads every module
        pass


_bundle()
