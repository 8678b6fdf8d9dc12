"""Calls that look like writes but repeat nothing: model calls, reads, local commands, upserts.

A POST to ``/v1/embeddings`` is a model call, a GraphQL POST of a ``query`` reads, ``subprocess.run(["git",
"clone", ...])`` works on a local copy, and ``session.merge(row); session.commit()`` upserts one
row by primary key. The effect model (:mod:`resume_audit.analysis.effects`) asks these before it
reports a sink call as an effect; the call graph asks :func:`graphql_read_call` before it follows
a GraphQL helper handed a query.
"""

from __future__ import annotations

import re

import libcst as cst

from resume_audit.analysis.effect_shapes import ORM_STAGING
from resume_audit.analysis.queries import NameResolver
from resume_audit.facts.model import CallInfo, FunctionInfo
from resume_audit.facts.syntax import argument, dict_items, string_value

#: POSTs that are model calls, not effects: OpenAI-compatible, Anthropic, Ollama, Gemini,
#: Cohere/TEI rerank and embedding endpoints
MODEL_ENDPOINT = re.compile(
    r"(/embeddings?|/chat/completions|/completions|/v1/messages|/v1/responses|/api/generate|/api/chat|/api/embed\w*"
    r"|:generateContent|:streamGenerateContent|:embedContent|/rerank|/v1/embed)(\?|/?$)"
)


#: REST endpoints whose POST adds members to a set (GitHub's issue assignees and labels): a
#: repeat leaves the same set
SET_ENDPOINT = re.compile(r"/issues/[^/]+/(assignees|labels)(\?|/?$)")


def url_text(
    expr: cst.BaseExpression | None, resolver: NameResolver, scope: FunctionInfo | None, depth: int = 0
) -> str | None:
    """The URL an argument spells, with unknown parts as ``*``: ``f"{base}/v1/embeddings"``
    -> ``*/v1/embeddings``; a name bound to a string in the same scope is followed."""
    if expr is None or depth > 4:
        return None
    text = string_value(expr)
    if text is not None:
        return text
    if isinstance(expr, cst.FormattedString):
        out = []
        for part in expr.parts:
            out.append(part.value if isinstance(part, cst.FormattedStringText) else "*")
        return "".join(out)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        left = url_text(expr.left, resolver, scope, depth + 1) or "*"
        right = url_text(expr.right, resolver, scope, depth + 1) or "*"
        return left + right
    if isinstance(expr, cst.Name):
        found = resolver.binding_value(expr.value, scope, None)
        if found is not None and found[0].kind == "assign":
            return url_text(found[0].value, resolver, found[1], depth + 1)
    return None


def commit_of_upserts_only(call: CallInfo) -> bool:
    """``session.merge(row); session.commit()``: the only staged change is a merge (an upsert by
    primary key), so a re-run leaves one row."""
    f = call.node.func
    fn = call.function
    if fn is None or not (isinstance(f, cst.Attribute) and f.attr.value == "commit" and isinstance(f.value, cst.Name)):
        return False
    staged = [
        g.attr.value
        for other in fn.calls
        if other.order < call.order
        and isinstance(g := other.node.func, cst.Attribute)
        and isinstance(g.value, cst.Name)
        and g.value.value == f.value.value
        and g.attr.value in (ORM_STAGING | {"merge", "execute", "exec"})
    ]
    return bool(staged) and all(m == "merge" for m in staged)


#: commands that only read or work in a local checkout: a re-run repeats nothing outside
_LOCAL_READ_COMMANDS = frozenset(
    {
        "ls",
        "cat",
        "grep",
        "rg",
        "find",
        "head",
        "tail",
        "wc",
        "diff",
        "echo",
        "pwd",
        "which",
        "file",
        "stat",
        "bandit",
        "ruff",
        "flake8",
        "pylint",
        "mypy",
        "pyright",
        "semgrep",
        "eslint",
        "tsc",
        "black",
        "cloc",
        "tree",
        "pytest",
        "py_compile",
        "compileall",
    }
)
_GIT_READ_SUBCOMMANDS = frozenset(
    {
        "clone",
        "fetch",
        "checkout",
        "switch",
        "grep",
        "diff",
        "log",
        "show",
        "status",
        "rev-parse",
        "rev-list",
        "merge-base",
        "ls-files",
        "ls-tree",
        "ls-remote",
        "blame",
        "branch",
        "describe",
        "cat-file",
        "config",
        "remote",
        "submodule",
        "worktree",
        "sparse-checkout",
        "shortlog",
        "for-each-ref",
        "name-rev",
    }
)
#: package managers' subcommands that bring a local environment to a declared state: a re-run
#: converges on the same installed packages (``pip install``, ``npm ci``, ``python -m venv``)
_PIP_CONVERGING = frozenset({"install", "download", "freeze", "list", "show", "check"})
_CONVERGING_SUBCOMMANDS = {
    "pip": _PIP_CONVERGING,
    "pip3": _PIP_CONVERGING,
    "uv": frozenset({"sync", "pip", "venv", "lock"}),
    "npm": frozenset({"ci", "install", "ls", "view", "outdated"}),
    "pnpm": frozenset({"install", "ls"}),
    "yarn": frozenset({"install", "list"}),
    "poetry": frozenset({"install", "lock", "show"}),
    "venv": frozenset({"*"}),
}
#: flags that make any command report what it would do, or what it is, without doing it
_NO_OP_FLAGS = frozenset({"--dry-run", "--dryrun", "--version", "--help", "-h"})
#: spawners whose positional arguments are the command's words one by one (the rest take one list
#: or one shell string first)
_EXEC_STYLE = ("create_subprocess_exec",)
#: the spawners a command-running helper may call (the effect catalog names them as sinks)
_SPAWNERS = frozenset(
    {
        "run",
        "call",
        "check_call",
        "check_output",
        "Popen",
        "create_subprocess_exec",
        "create_subprocess_shell",
        "system",
        "getoutput",
        "getstatusoutput",
    }
)
#: a word the command takes from the helper's parameter of this name (``*args``, ``cmd``)
_PARAM = "\0param:"


def local_read_command(call: cst.Call, resolver: NameResolver, scope: FunctionInfo | None) -> bool:
    """``subprocess.run(["git", "clone", url, tmp])``, ``["bandit", "-f", "json", path]``, ``create_subprocess_exec("npx",
    "playwright", "install", "--dry-run")``: a command that only reads, works on a local copy or only says what it
    would do (``git push``, ``kubectl apply``, ``rm`` stay effects)."""
    return reads_only(spawned_words(call, resolver, scope))


def reads_only(words: list[str]) -> bool:
    """Whether the command these words spell (``*`` for a word not known) repeats nothing outside."""
    if not words or words[0] == "*" or words[0].startswith(_PARAM):
        return False
    if any(w in _NO_OP_FLAGS for w in words[1:]):
        return True
    program = words[0].rsplit("/", 1)[-1]
    if program in ("python", "python3", "sys.executable") and len(words) >= 3 and words[1] == "-m":
        words = words[2:]
        program = words[0]
    sub = next((w for w in words[1:] if not w.startswith("-")), None)
    if program == "git":
        return sub in _GIT_READ_SUBCOMMANDS
    if program in _CONVERGING_SUBCOMMANDS:
        allowed = _CONVERGING_SUBCOMMANDS[program]
        return "*" in allowed or sub in allowed
    return program in _LOCAL_READ_COMMANDS


def spawned_words(call: cst.Call, resolver: NameResolver, scope: FunctionInfo | None) -> list[str]:
    """The words of the command a spawning call runs, as far as the code spells them: ``*`` for an
    unknown word, a parameter marker for words taken from ``scope``'s parameter (see
    :func:`command_read_call`)."""
    if any(n.rsplit(".", 1)[-1] in _EXEC_STYLE for n in resolver.call_names(call, scope)):
        out: list[str] = []
        for arg in call.args:
            if arg.keyword is not None:
                break
            if arg.star == "*":
                out.extend(_command_words(arg.value, resolver, scope) or ["*"])
            else:
                out.append(_word(arg.value, resolver, scope))
        return out
    first = call.args[0] if call.args else None
    if first is not None and first.star == "*":
        return _command_words(first.value, resolver, scope)
    return _command_words(argument(call, 0, "args"), resolver, scope)


def _word(expr: cst.BaseExpression, resolver: NameResolver, scope: FunctionInfo | None) -> str:
    word = string_value(expr)
    if word is None and "sys.executable" in resolver.names(expr, scope):
        return "sys.executable"
    if word is None and isinstance(expr, cst.Name) and scope is not None and expr.value in scope.param_names():
        return _PARAM + expr.value
    return "*" if word is None else word


def _command_words(
    expr: cst.BaseExpression | None, resolver: NameResolver, scope: FunctionInfo | None, depth: int = 0
) -> list[str]:
    if expr is None or depth > 3:
        return []
    text = string_value(expr)
    if text is not None:
        return text.split()
    if isinstance(expr, (cst.List, cst.Tuple)):
        out: list[str] = []
        for el in expr.elements:
            if isinstance(el, cst.StarredElement):
                out.extend(_command_words(el.value, resolver, scope, depth + 1) or ["*"])
            else:
                out.append(_word(el.value, resolver, scope))
        return out
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        left = _command_words(expr.left, resolver, scope, depth + 1)
        return (left or ["*"]) + (_command_words(expr.right, resolver, scope, depth + 1) or ["*"])
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in ("list", "tuple"):
        inner = argument(expr, 0, "iterable")
        return _command_words(inner, resolver, scope, depth + 1) if inner is not None else []
    if isinstance(expr, cst.Name):
        if scope is not None and scope.param(expr.value) is not None:
            return [_PARAM + expr.value]
        found = resolver.binding_value(expr.value, scope, None)
        if found is not None and found[0].kind == "assign":
            return _command_words(found[0].value, resolver, found[1], depth + 1)
    return []


def command_read_call(call: cst.Call, callee: FunctionInfo, resolver: NameResolver, scope: FunctionInfo | None) -> bool:
    """``_run_git("diff", base, cwd=wt)`` where ``_run_git(*args)`` runs ``["git", *args]`` and nothing else:
    the caller's words decide whether this call of the command-running helper only reads (``git diff``)
    or changes something (``git push``, which is followed as before)."""
    spawns = [c for c in callee.calls if _spawner(c.node)]
    if len(spawns) != 1:
        return False
    callee_resolver = resolver.project.resolver(callee.module) if resolver.project is not None else resolver
    words = spawned_words(spawns[0].node, callee_resolver, callee)
    if not any(w.startswith(_PARAM) for w in words):
        return False
    star = callee.node.params.star_arg
    names = callee.param_names()
    offset = 1 if callee.is_method else 0
    out: list[str] = []
    for w in words:
        if not w.startswith(_PARAM):
            out.append(w)
            continue
        name = w[len(_PARAM) :]
        if isinstance(star, cst.Param) and star.name.value == name:
            fixed = len(callee.node.params.posonly_params) + len(callee.node.params.params) - offset
            rest = [a for a in call.args if a.keyword is None][fixed:]
            if any(a.star for a in rest):
                return False
            out.extend(_word(a.value, resolver, scope) for a in rest)
        elif name in names:
            index = names.index(name) - offset
            passed = argument(call, index, name)
            out.extend(_command_words(passed, resolver, scope) if passed is not None else ["*"])
        else:
            return False
    return reads_only(out)


def _spawner(call: cst.Call) -> bool:
    """``subprocess.run(...)``, ``asyncio.create_subprocess_exec(...)``, ``os.system(...)``: a spawn
    spelled through its module (a bare ``run(...)`` is too common a name to count)."""
    f = call.func
    return isinstance(f, cst.Attribute) and f.attr.value in _SPAWNERS


def decided_by_caller_read(
    call: cst.Call, callee: FunctionInfo, resolver: NameResolver, scope: FunctionInfo | None
) -> bool:
    """A helper whose effect depends on what the caller hands it, and this caller hands it a read: a GraphQL
    ``query`` (:func:`graphql_read_call`) or a read-only command (:func:`command_read_call`)."""
    return graphql_read_call(call, callee, resolver, scope) or command_read_call(call, callee, resolver, scope)


def graphql_query_parameter(fn: FunctionInfo) -> str | None:
    """The parameter of ``fn`` that becomes the ``query`` of a GraphQL POST it makes
    (``client.post(URL, json={"query": query, ...})``): such a helper writes only when
    handed a mutation."""
    params = set(fn.param_names())
    for info in fn.calls:
        f = info.node.func
        if not (isinstance(f, cst.Attribute) and f.attr.value in ("post", "request", "execute")):
            continue
        body = argument(info.node, 99, "json")
        if isinstance(body, cst.Dict):
            for key, value in dict_items(body):
                if key == "query" and isinstance(value, cst.Name) and value.value in params:
                    return value.value
    return None


def graphql_read_call(call: cst.Call, callee: FunctionInfo, resolver: NameResolver, scope: FunctionInfo | None) -> bool:
    """``self._graphql(ISSUES_QUERY, ...)`` where the query handed to a GraphQL helper is
    a ``query``, not a ``mutation``: the helper's POST only reads for this call."""
    param = graphql_query_parameter(callee)
    if param is None:
        return False
    index = callee.param_names().index(param) - (1 if callee.is_method else 0)
    text = url_text(argument(call, index, param), resolver, scope)
    if text is None:
        return False
    body = re.sub(r"#[^\n]*", "", text).lstrip()
    if body.startswith(("query", "{")):
        return True
    if body.startswith("mutation"):
        field = _GRAPHQL_FIRST_FIELD.search(body)
        return field is not None and bool(_IDEMPOTENT_MUTATION.match(field.group(1)))
    return False


#: the first field of a mutation's selection: ``mutation($i: X!) { addComment(input: $i) {...} }``
_GRAPHQL_FIRST_FIELD = re.compile(r"\{\s*(?:\w+\s*:\s*)?(\w+)\s*[({]")
#: mutations that set state to a value (a repeat leaves the same result): closing, labelling,
#: assigning, updating fields -- unlike ``addComment``, ``createIssue``, ``mergePullRequest``
_IDEMPOTENT_MUTATION = re.compile(
    r"^(close|reopen|update|replace|set|remove|delete|lock|unlock|pin|unpin|mark|resolve|unresolve|minimize|"
    r"unminimize|clear|archive|unarchive|add\w*Labels?|add\w*Assignees?)",
    re.IGNORECASE,
)
