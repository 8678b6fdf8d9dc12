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
        "ls-files",
        "ls-tree",
        "blame",
        "branch",
        "describe",
        "cat-file",
        "config",
        "remote",
        "submodule",
        "worktree",
        "sparse-checkout",
    }
)


def local_read_command(call: cst.Call, resolver: NameResolver, scope: FunctionInfo | None) -> bool:
    """``subprocess.run(["git", "clone", url, tmp])``, ``["bandit", "-f", "json", path]``: a command
    that only reads or works on a local copy (``git push``, ``kubectl apply``, ``rm`` stay effects)."""
    words = _command_words(argument(call, 0, "args"), resolver, scope)
    if not words:
        return False
    program = words[0].rsplit("/", 1)[-1]
    if program in ("python", "python3", "sys.executable") and len(words) >= 3 and words[1] == "-m":
        program = words[2]
    if program == "git":
        sub = next((w for w in words[1:] if not w.startswith("-")), None)
        return sub in _GIT_READ_SUBCOMMANDS
    return program in _LOCAL_READ_COMMANDS


def _command_words(
    expr: cst.BaseExpression | None, resolver: NameResolver, scope: FunctionInfo | None, depth: int = 0
) -> list[str]:
    if expr is None or depth > 3:
        return []
    text = string_value(expr)
    if text is not None:
        return text.split()
    if isinstance(expr, (cst.List, cst.Tuple)):
        out = []
        for el in expr.elements:
            word = string_value(el.value)
            if word is None and "sys.executable" in resolver.names(el.value, scope):
                word = "sys.executable"
            out.append("*" if word is None else word)
            if len(out) >= 3:
                break
        return out if out and out[0] != "*" else []
    if isinstance(expr, cst.Name):
        found = resolver.binding_value(expr.value, scope, None)
        if found is not None and found[0].kind == "assign":
            return _command_words(found[0].value, resolver, found[1], depth + 1)
    return []


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
