from ..flagtable import first_sentence, removed
from ..release import version_key
from . import Context, describe_workload


def check(ctx: Context):
    table = removed()
    for invocation in ctx.world.invocations:
        for option in invocation.options:
            flag = option.name.replace("_", "-")
            entry = table.get(flag)
            if entry is None:
                continue
            removed_in = entry.get("removed_in")
            release = invocation.release
            if release and removed_in and version_key(release) < version_key(str(removed_in)):
                continue  # the release this workload runs still accepts it
            when = f"was removed in vLLM {removed_in}" if removed_in else "was removed from vLLM"
            if entry.get("last_accepted"):
                when += f" (last accepted by {entry['last_accepted']})"
            runs = f"; {describe_workload(invocation)} runs {release}" if release else ""
            yield ctx.finding(option.token, f"`{option.name}` {when}{runs}, and vLLM refuses to start with it. "
                              f"{first_sentence(entry['replacement'])}", about=invocation, value=flag)
