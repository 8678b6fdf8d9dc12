"""The environment a sweep child gets: an allow-list, written down here and nowhere else.

``audit`` in CI runs the code of a pull request. Whatever the sweep's own
environment holds -- ``GITHUB_TOKEN``, ``ACTIONS_*`` tokens, cloud credentials,
``*_API_KEY``, database URLs -- must not reach that code, not even as bytes in
the child's memory. So the child's environment is built from names, not
filtered by them:

- :data:`PASSED_NAMES` and :data:`PASSED_PREFIXES`: what the interpreter needs
  to start and import the program (the search path, the virtualenv, the
  locale, the time zone) -- nothing that authenticates;
- :data:`FAKE_KEYS`: keys LLM/SDK client constructors read when the program is
  imported (``ChatOpenAI()`` at module level raises without ``OPENAI_API_KEY``);
  the child gets :data:`FAKE_VALUE`, never the real one, which a stubbed model
  has no use for and an unstubbed one cannot send anywhere (the network is
  confined);
- the names the user passes on purpose (``--pass-env NAME``, ``pass-env`` in
  ``[tool.resume-audit]`` or an entry point's audit table), with their values;
- the cell's own ``HOME``/``TMPDIR``/``XDG_*`` (set by the child's sandbox).

The same allow-list starts the fork server every child is forked from
(:mod:`resume_audit.dynamic.parent.forkserver`): a fork carries its parent's
memory, so a server started with the full environment would hand the secret
to every child's ``/proc/self/environ``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from resume_audit.dynamic.child.fake_credentials import FAKE_CREDENTIALS, PLACEHOLDER

#: passed as they are, when the sweep's environment has them
PASSED_NAMES: tuple[str, ...] = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    "NO_COLOR",
    # the interpreter and the program's imports
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSAFEPATH",
    "PYTHONNOUSERSITE",
    "PYTHONUSERBASE",
    "PYTHONIOENCODING",
    "PYTHONUTF8",
    "PYTHONHASHSEED",
    "PYTHONWARNINGS",
    "PYTHONDEVMODE",
    "PYTHONFAULTHANDLER",
    "PYTHONPYCACHEPREFIX",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONUNBUFFERED",
    "PYTHONPLATLIBDIR",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV",
    "LD_LIBRARY_PATH",
)
#: passed as they are: every variable whose name starts so (the locale's categories)
PASSED_PREFIXES: tuple[str, ...] = ("LC_",)

#: keys provider and SDK clients read at construction, each with the placeholder the child gets instead of
#: the real value (one table: :data:`resume_audit.dynamic.child.fake_credentials.FAKE_CREDENTIALS`)
FAKE_KEYS: tuple[str, ...] = tuple(FAKE_CREDENTIALS)
#: obviously not a key: a provider that received it would say so, and a person reading a log sees why
FAKE_VALUE = PLACEHOLDER

#: the CLI flag that passes a withheld variable (the report names it)
PASS_FLAG = "--pass-env"


def allowed(name: str) -> bool:
    """Whether the allow-list passes ``name`` on its own (without ``--pass-env``)."""
    return name in PASSED_NAMES or name.startswith(PASSED_PREFIXES)


def base_variables(environ: Mapping[str, str]) -> dict[str, str]:
    """The allow-listed variables of ``environ``, with the fake keys: what every child starts from."""
    out = {name: value for name, value in environ.items() if allowed(name)}
    out.update(FAKE_CREDENTIALS)
    return out


@dataclass(frozen=True)
class ChildEnvironment:
    """What one sweep's children get, decided by the parent from its own environment.

    ``variables`` holds values (only allow-listed and user-passed ones); ``withheld``
    holds only names -- the ones the parent had and did not pass -- so a report can
    say which variable a failing program missed and how to pass it.
    """

    variables: tuple[tuple[str, str], ...] = ()
    #: ``--pass-env`` names (present in ``variables`` when the sweep's environment has them)
    passed: tuple[str, ...] = ()
    #: names in the sweep's environment the children do not get
    withheld: tuple[str, ...] = ()

    @classmethod
    def build(cls, environ: Mapping[str, str], pass_env: Iterable[str] = ()) -> "ChildEnvironment":
        passed = tuple(dict.fromkeys(name.strip() for name in pass_env if name.strip()))
        variables = base_variables(environ)
        variables.update((name, environ[name]) for name in passed if name in environ)
        withheld = tuple(sorted(name for name in environ if name not in variables and name not in passed))
        return cls(tuple(sorted(variables.items())), passed, withheld)

    def as_dict(self) -> dict[str, str]:
        return dict(self.variables)

    def withheld_named_in(self, text: str) -> list[str]:
        """The withheld names ``text`` (a child's error message) mentions as whole words."""
        if not text or not self.withheld:
            return []
        words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
        return [name for name in self.withheld if name in words]

    def hint(self, text: str) -> str:
        """A sentence naming the withheld variables ``text`` mentions and the flag that passes them ("" if none)."""
        names = self.withheld_named_in(text)
        if not names:
            return ""
        flags = " ".join(f"{PASS_FLAG} {name}" for name in names)
        return (
            f"{', '.join(names)} {'is' if len(names) == 1 else 'are'} set in the sweep's environment but "
            f"withheld from the program (the children get an allow-list); pass {'it' if len(names) == 1 else 'them'} "
            f"with {flags}"
        )
