from ..flagtable import first_sentence, never_existed
from . import Context


def check(ctx: Context):
    table = never_existed()
    for invocation in ctx.world.invocations:
        for option in invocation.options:
            flag = option.name.replace("_", "-")
            entry = table.get(flag)
            if entry is None:
                continue
            yield ctx.finding(option.token, f"`{option.name}` is not an option of the vLLM server, which refuses "
                              f"to start with it. {first_sentence(entry['instead'])}", about=invocation, value=flag)
