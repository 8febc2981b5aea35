"""The one parser of vLLM release numbers, and their order."""
from __future__ import annotations

import re
from functools import lru_cache

# What `version_key` orders: also PEP 440 pre-releases (a, b) and a local part (`+cu129`), as wheels
# and the catalogs' own file names spell them.
_ORDERABLE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:[.-]?(a|b|rc|dev)(\d*))?(?:[.-]?(post)(\d*))?"
                        r"(?:\+[0-9A-Za-z.]*)?$")
_PRE_RANK = {"dev": 0, "a": 1, "b": 2, "rc": 3, None: 4}


def version_key(version: str) -> tuple[int, ...]:
    """The one parser of vLLM release numbers, as a sort key: 0.6.4 < 0.6.4.post1 < 0.6.5 < 0.10.1 <
    0.10.1.1 < 0.29.0 = 0.29; dev < a < b < rc sort before the release, post after it. The key is flat,
    `key[:2]` is the minor release and `key[:3]` the (major, minor, patch) triple. ValueError when the
    text is no release number (`latest`, `nightly`)."""
    if isinstance(version, str):
        return _version_key(version)
    raise ValueError(f"not a vLLM release number: {version!r}")


@lru_cache(maxsize=4096)  # a run sorts and compares the same few release numbers tens of thousands of times
def _version_key(version: str) -> tuple[int, ...]:
    match = _ORDERABLE.match(version.strip())
    if not match:
        raise ValueError(f"not a vLLM release number: {version!r}")
    major, minor, patch, extra, pre, pre_number, post, post_number = match.groups()
    return (int(major), int(minor), int(patch or 0), int(extra or 0), _PRE_RANK[pre], int(pre_number or 0),
            int(post_number or 0) if post else -1)


def compare_versions(a: str, b: str) -> int:
    """-1, 0 or 1 as a is older than, equal to or newer than b."""
    ka, kb = version_key(a), version_key(b)
    return (ka > kb) - (ka < kb)
