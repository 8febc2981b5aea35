"""VL801: `--trust-remote-code` where the catalog knows the release loads the model without it (warning), or
where vllmlint cannot tell (info).

The answer is VL712's (`vllmlint.capacity.remote_code.answer()`, which calls `needs_trust_remote_code()`): True (needed: silent here; VL712 reports its
absence), False (not needed: warning), None (not known: info). Both rules are silent where the fact does not
describe what the invocation loads (`describes()`: a `--config` file, `--revision` / `--code-revision`
other than main, `--hf-config-path`, a `--config-format` other than auto/hf), so they never both fire and
never disagree. Only the command line is read: there is no reader for engine keyword arguments
(`trust_remote_code: true` in a Python or JSON mapping).
"""
from __future__ import annotations

from vllmlint.capacity.remote_code import answer, describes, release_range
from vllmlint.capacity.workload import workloads
from vllmlint.checks import Context
from vllmlint.finding import Severity

_RISK = ("it lets vLLM (and transformers) import and run Python from the model repository, with the "
         "server's privileges and its token, at every pod start")


def check(ctx: Context):
    for work in workloads(ctx.world):
        invocation = work.invocation
        flags = invocation.option("--trust-remote-code")
        if not flags:
            continue
        flag = flags[-1]
        if flag.name.startswith("--no-") or (flag.value_known and str(flag.value).lower() in ("false", "0", "no")):
            continue  # turned off (a release with `--no-` spellings or a valued boolean)
        if not describes(invocation):
            continue
        needed = answer(ctx.world, work)
        if needed is True:
            continue  # the flag is what makes the model load (VL712's case, here satisfied)
        name = work.model_name or "the model"
        release = invocation.release
        on = f"vLLM {release}" if release else "this vLLM release"
        if needed is None:
            why = ("vllmlint does not know whether it needs the flag on " + on if work.match is None
                   or work.match.how in ("exact id", "case-insensitive id")
                   else f"it is not a catalogued repository named by its id ({work.match.how}), so vllmlint "
                        f"does not know whether it needs the flag")
            yield ctx.finding(
                flag.token,
                f"--trust-remote-code with {name}: {why}. The flag is not harmless: {_RISK}. Keep it only if "
                "the model needs it (transformers or vLLM does not know its architecture), after reading the "
                "repository's code, and pin --revision and --code-revision to the commit you read.",
                about=invocation, value=f"{work.model.id if work.model else name}@{release or '?'}",
                severity=Severity.INFO)
            continue
        assert work.match is not None  # answer() is not None only for a match
        model = work.match.model
        facts = model.needs_trust_remote_code
        assert facts is not None
        row = release_range(release)
        if facts.remote_config is None:
            on = on if release else "any vLLM release"
            known = (f"its config.json has no auto_map (model_type {facts.model_type}, architecture "
                     f"{model.architecture}): there is no repository code to allow, and {on} loads it without "
                     "the flag. With it, any code the repository later adds to its main branch runs at the "
                     "next start")
        elif row is not None and facts.model_type in row.config_registry:
            known = (f"model_type {facts.model_type} is in {on}'s own config registry, which loads it without "
                     "the repository's code")
        else:
            requirement = f"transformers{row.transformers}" if row is not None else "transformers"
            known = (f"{requirement}, which {on} requires, knows model_type {facts.model_type} (from "
                     f"{facts.transformers_since}), so it loads without the flag; with the flag, transformers "
                     f"runs the repository's own config class instead (auto_map.AutoConfig {facts.remote_config})")
        yield ctx.finding(
            flag.token,
            f"--trust-remote-code is not needed for {name} on {on}: {known}. The flag {_RISK[3:]}. "
            "Remove --trust-remote-code.",
            about=invocation, value=f"{model.id}@{release or '?'}")
