from functools import lru_cache

from ..release import version_key
from . import Context


@lru_cache(maxsize=1)
def removal_releases() -> dict[str, dict]:
    """flag -> {removed_in, last_accepted} from the researched table `rules/data/removed-flags.yaml`."""
    from ..data import load_yaml_data, rules_dir

    path = rules_dir() / "data" / "removed-flags.yaml"
    if not path.exists():
        return {}
    data = load_yaml_data(path) or {}
    entries = data.get("removed", []) if isinstance(data, dict) else data
    return {e["flag"]: e for e in entries if isinstance(e, dict) and "flag" in e}


def removed_flags(ctx: Context) -> dict[str, dict]:
    return {entry["flag"]: entry for entry in ctx.rule.data or []}


def check(ctx: Context):
    table = removed_flags(ctx)
    releases = removal_releases()
    for invocation in ctx.world.invocations:
        for option in invocation.options:
            flag = option.name.replace("_", "-")
            entry = table.get(flag)
            if entry is None:
                continue
            known = releases.get(flag, {})
            removed_in = known.get("removed_in")
            if invocation.release and removed_in and version_key(invocation.release) < version_key(str(removed_in)):
                continue  # the release this workload runs still accepts it
            when = f"was removed in vLLM {removed_in}" if removed_in else "was removed from vLLM"
            runs = f"; this workload runs {invocation.release}" if invocation.release else ""
            yield ctx.finding(option.token, f"`{option.name}` {when}{runs}, and vLLM refuses to start with it: "
                              f"{entry['replacement']}", about=invocation, value=flag)
