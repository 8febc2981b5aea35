"""Thin wrapper: `python tools/sync_vllm.py 0.29.0 0.31.0 ...` == `python -m vllmlint_dev.sync ...`."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vllmlint_dev.sync import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
