"""The effect-sink model: which calls change the world in a way a re-run repeats.

Every EO rule asks the same question -- "is this call a non-idempotent side
effect?" -- so the answer lives here, once. A call is an effect when its
qualified name matches a built-in sink (HTTP mutating verbs, payment SDKs,
email, message publish, cloud-SDK writes, SQL writes, file writes and
deletes, subprocesses) or a sink the user listed in ``[tool.resume-audit]
effect-sinks``, and it is not keyed by an idempotency key.

What counts as keyed (documented in docs/effects.md):

* a keyword argument whose name says idempotency or deduplication:
  ``idempotency_key=``, ``IdempotencyKey=``, ``MessageDeduplicationId=``,
  AWS ``ClientToken=`` / ``ClientRequestToken=``;
* an ``Idempotency-Key`` (or ``X-Idempotency-Key``) header, given inline or
  through a dict variable built in the same function;
* SQL that is idempotent by construction: ``INSERT ... ON CONFLICT DO
  NOTHING``, ``INSERT OR IGNORE``, ``INSERT IGNORE``.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from dataclasses import dataclass
from typing import Callable, Iterable

import libcst as cst

from resume_audit.analysis.effect_catalog import GOOGLE_CONSEQUENCES, GOOGLE_WRITE_METHODS, MCP_ADAPTER_CONSEQUENCE, catalog_methods, catalog_specs
from resume_audit.facts.model import CallInfo, FunctionInfo, ModuleFacts
from resume_audit.analysis.resolve import Resolver
from resume_audit.facts.syntax import argument, dict_items, keyword, positional, string_value, subscript_keys_assigned

_MUTATING_HTTP = {"POST", "PUT", "PATCH", "DELETE"}
_HTTP_VERBS = "post|put|patch|delete"


#: what a repeat of an effect of each kind does, when the catalog has nothing more precise
KIND_CONSEQUENCES: dict[str, str] = {
    "http": "sends the HTTP request again",
    "payment": "moves the money again (a second charge or refund)",
    "email": "sends the email again",
    "message": "publishes the message again",
    "cloud": "repeats the cloud write",
    "sql": "repeats the database write",
    "file": "repeats the file change",
    "subprocess": "runs the command again",
    "saas": "repeats the write to the service",
    "mcp": "calls the MCP tool again",
    "configured": "repeats the effect",
}


@dataclass(frozen=True)
class Effect:
    """A classified effect call."""

    kind: str
    #: the qualified name (or method) that matched, shown to users
    label: str
    #: what a repeat does, in the user's words ("sends the Gmail message again")
    consequence: str = ""

    @property
    def repeat(self) -> str:
        return self.consequence or KIND_CONSEQUENCES.get(self.kind, "repeats the effect")


@dataclass(frozen=True)
class SinkSpec:
    pattern: str
    kind: str
    #: extra check on the call's arguments (e.g. a write mode for ``open``)
    when: Callable[[cst.Call], bool] | None = None
    consequence: str = ""


def _mode_writes(call: cst.Call) -> bool:
    mode = string_value(argument(call, 1, "mode"))
    return mode is not None and any(ch in mode for ch in "wax+")


def _method_is_mutating(index: int) -> Callable[[cst.Call], bool]:
    def check(call: cst.Call) -> bool:
        method = string_value(argument(call, index, "method"))
        return method is not None and method.upper() in _MUTATING_HTTP

    return check


def _urlopen_sends_data(call: cst.Call) -> bool:
    if argument(call, 1, "data") is not None:
        return True
    target = argument(call, 0, "url")
    if isinstance(target, cst.Call):
        if argument(target, 1, "data") is not None:
            return True
        method = string_value(argument(target, 5, "method"))
        return method is not None and method.upper() in _MUTATING_HTTP
    return False


_SQL_WRITE = re.compile(r"\b(INSERT|UPDATE|DELETE|MERGE|REPLACE|UPSERT|TRUNCATE)\b", re.IGNORECASE)
_SQL_IDEMPOTENT = re.compile(
    r"ON\s+CONFLICT(\s*\([^)]*\))?\s+DO\s+NOTHING|INSERT\s+OR\s+IGNORE|INSERT\s+IGNORE", re.IGNORECASE
)
_SQL_COMMENT = re.compile(r"--[^\n]*|/\*.*?\*/", re.DOTALL)


def sql_write_text(sql: str) -> bool:
    """Does this SQL text write, non-idempotently? ``SELECT``s and ``ON CONFLICT DO NOTHING`` do not."""
    body = _SQL_COMMENT.sub(" ", sql).strip()
    first = body.split(None, 1)[0].upper() if body else ""
    if first not in {"INSERT", "UPDATE", "DELETE", "MERGE", "REPLACE", "UPSERT", "TRUNCATE", "WITH"}:
        return False
    if first == "WITH" and not _SQL_WRITE.search(body):
        return False
    return not _SQL_IDEMPOTENT.search(body)


def _sql_argument_writes(call: cst.Call) -> bool:
    first = argument(call, 0, "query") or argument(call, 0, "statement") or argument(call, 0, "sql")
    if isinstance(first, cst.Call):  # psycopg sql.SQL("..."), sqlalchemy text("...")
        inner = argument(first, 0, "text")
        if inner is None:
            first_arg = positional(first, 0)
            inner = first_arg.value if first_arg is not None else None
        first = inner
    text = string_value(first)
    return text is not None and sql_write_text(text)


#: Built-in sinks. Patterns are fnmatch globs over resolved qualified names
#: (``*`` also spans dots); instance methods are written ``Type.method``.
BUILTIN_SINKS: tuple[SinkSpec, ...] = (
    # HTTP
    *(SinkSpec(f"{lib}.{verb}", "http") for lib in ("requests", "requests.api", "httpx") for verb in _HTTP_VERBS.split("|")),
    *(SinkSpec(f"{lib}.request", "http", _method_is_mutating(0)) for lib in ("requests", "requests.api", "httpx")),
    *(
        SinkSpec(f"{cls}.{verb}", "http")
        for cls in (
            "requests.Session", "requests.session", "requests.sessions.Session",
            "httpx.Client", "httpx.AsyncClient", "aiohttp.ClientSession", "aiohttp.client.ClientSession",
        )
        for verb in _HTTP_VERBS.split("|")
    ),
    *(
        SinkSpec(f"{cls}.request", "http", _method_is_mutating(0))
        for cls in ("requests.Session", "requests.session", "httpx.Client", "httpx.AsyncClient", "aiohttp.ClientSession")
    ),
    SinkSpec("urllib3.PoolManager.request", "http", _method_is_mutating(0)),
    SinkSpec("urllib3.request", "http", _method_is_mutating(0)),
    SinkSpec("urllib.request.urlopen", "http", _urlopen_sends_data),
    # payments
    *(
        SinkSpec(f"stripe.*.{verb}", "payment")
        for verb in (
            "create", "confirm", "capture", "cancel", "modify", "update", "delete", "pay", "refund",
            "finalize_invoice", "void_invoice", "send_invoice", "mark_uncollectible", "attach", "detach",
            "create_async", "confirm_async", "capture_async", "pay_async",
        )
    ),
    *(SinkSpec(f"braintree.*.{verb}", "payment") for verb in ("sale", "refund", "submit_for_settlement", "void", "create")),
    SinkSpec("paypalrestsdk.*.create", "payment"),
    SinkSpec("paypalrestsdk.*.execute", "payment"),
    SinkSpec("square.*.create_payment", "payment"),
    SinkSpec("Adyen.*.payments", "payment"),
    # email
    *(SinkSpec(f"smtplib.{c}.{m}", "email") for c in ("SMTP", "SMTP_SSL", "LMTP") for m in ("sendmail", "send_message")),
    SinkSpec("yagmail.SMTP.send", "email"),
    SinkSpec("sendgrid.*.send", "email"),
    SinkSpec("django.core.mail.send_mail", "email"),
    SinkSpec("django.core.mail.send_mass_mail", "email"),
    SinkSpec("django.core.mail.EmailMessage.send", "email"),
    SinkSpec("resend.Emails.send", "email"),
    SinkSpec("flask_mail.Mail.send", "email"),
    SinkSpec("fastapi_mail.FastMail.send_message", "email"),
    # messages and notifications
    SinkSpec("kafka.KafkaProducer.send", "message"),
    SinkSpec("confluent_kafka.Producer.produce", "message"),
    SinkSpec("aiokafka.AIOKafkaProducer.send*", "message"),
    SinkSpec("*.basic_publish", "message"),
    SinkSpec("aio_pika.*.publish", "message"),
    SinkSpec("google.cloud.pubsub*.publish", "message"),
    *(SinkSpec(f"redis.*.{m}", "message") for m in ("publish", "xadd", "lpush", "rpush", "incr", "incrby", "decr", "decrby", "hincrby")),
    SinkSpec("slack_sdk.*.chat_postMessage", "message"),
    SinkSpec("slack_sdk.*.chat_postEphemeral", "message"),
    SinkSpec("slack_sdk.*.files_upload*", "message"),
    SinkSpec("twilio.*.messages.create", "message"),
    SinkSpec("telegram.*.send_message", "message"),
    SinkSpec("nats.*.publish", "message"),
    SinkSpec("*.apply_async", "message"),
    SinkSpec("celery.*.send_task", "message"),
    # cloud SDK writes
    *(
        SinkSpec(f"boto3.*.{m}", "cloud")
        for m in (
            "put_object", "delete_object", "delete_objects", "copy_object", "upload_file", "upload_fileobj",
            "put_item", "update_item", "delete_item", "batch_write_item", "transact_write_items",
            "send_message", "send_message_batch", "publish", "send_email", "send_raw_email",
            "send_templated_email", "put_events", "put_record", "put_records", "start_execution", "invoke",
        )
    ),
    SinkSpec("boto3.resource.Object.put", "cloud"),
    SinkSpec("boto3.resource.Object.delete", "cloud"),
    *(SinkSpec(f"google.cloud.storage.*.{m}", "cloud") for m in ("upload_from_string", "upload_from_filename", "upload_from_file", "delete")),
    *(SinkSpec(f"google.cloud.firestore.*.{m}", "cloud") for m in ("set", "add", "update", "delete", "create")),
    *(SinkSpec(f"azure.storage.blob.*.{m}", "cloud") for m in ("upload_blob", "delete_blob")),
    # SQL writes
    SinkSpec("*.execute", "sql", _sql_argument_writes),
    SinkSpec("*.executemany", "sql", _sql_argument_writes),
    SinkSpec("*.executescript", "sql", _sql_argument_writes),
    SinkSpec("*.exec_driver_sql", "sql", _sql_argument_writes),
    SinkSpec("sqlalchemy.orm.*.commit", "sql"),
    SinkSpec("sqlalchemy.ext.asyncio.*.commit", "sql"),
    SinkSpec("sqlmodel.*.commit", "sql"),
    SinkSpec("*.objects.create", "sql"),
    SinkSpec("*.objects.bulk_create", "sql"),
    *(SinkSpec(f"{lib}.*.{m}", "sql") for lib in ("pymongo", "motor") for m in ("insert_one", "insert_many", "update_one", "update_many", "delete_one", "delete_many", "replace_one")),
    # files
    *(SinkSpec(f"{fn}", "file", _mode_writes) for fn in ("builtins.open", "io.open", "codecs.open", "aiofiles.open", "os.fdopen")),
    *(SinkSpec(f"pathlib.*.{m}", "file") for m in ("write_text", "write_bytes", "unlink", "rename", "replace", "rmdir")),
    *(SinkSpec(f"os.{m}", "file") for m in ("remove", "unlink", "rename", "replace", "rmdir", "removedirs", "truncate")),
    *(SinkSpec(f"shutil.{m}", "file") for m in ("rmtree", "move", "copy", "copy2", "copyfile", "copytree")),
    # subprocesses
    *(SinkSpec(f"subprocess.{m}", "subprocess") for m in ("run", "call", "check_call", "check_output", "Popen", "getoutput", "getstatusoutput")),
    *(SinkSpec(f"os.{m}", "subprocess") for m in ("system", "popen", "exec*", "spawn*", "posix_spawn*")),
    SinkSpec("asyncio.create_subprocess_*", "subprocess"),
)

#: the catalog first: its entries carry the precise consequence ("sends the SMS again")
BUILTIN_SINKS = tuple(SinkSpec(p, kind, None, why) for p, kind, why in catalog_specs()) + BUILTIN_SINKS

#: Methods recognised by name alone, whatever the receiver: distinctive enough
#: that a match is an effect (``path.write_text``, ``channel.basic_publish``)
#: or checked by their arguments (``cursor.execute("INSERT ...")``).
NAME_ONLY_SINKS: tuple[SinkSpec, ...] = (
    SinkSpec("write_text", "file"),
    SinkSpec("write_bytes", "file"),
    SinkSpec("basic_publish", "message"),
    SinkSpec("chat_postMessage", "message"),
    SinkSpec("sendmail", "email"),
    SinkSpec("apply_async", "message"),
    SinkSpec("insert_one", "sql"),
    SinkSpec("insert_many", "sql"),
    SinkSpec("execute", "sql", _sql_argument_writes),
    SinkSpec("executemany", "sql", _sql_argument_writes),
    SinkSpec("executescript", "sql", _sql_argument_writes),
    *(SinkSpec(m, kind, None, why) for m, kind, why in catalog_methods() if m not in ("chat_postMessage",)),
)

_KEY_KEYWORD = re.compile(r"idempot|dedup|client_?(request_?)?token", re.IGNORECASE)
_KEY_HEADER = re.compile(r"^(x-)?idempotency[-_ ]?key$", re.IGNORECASE)


@functools.lru_cache(maxsize=None)
def _glob(pattern: str) -> re.Pattern[str]:
    return re.compile(fnmatch.translate(pattern))


class SinkIndex:
    """Sink patterns by the package a name must start with, so a call's names are matched against
    the few patterns of their own package (and the ones that may match any package) rather than
    all 300, in the order given: the first pattern that matches still wins. Each pattern is
    compiled when first tried (most never are in a scan)."""

    def __init__(self, specs: Iterable[SinkSpec]) -> None:
        by_top: dict[str, list[tuple[int, SinkSpec]]] = {}
        anywhere: list[tuple[int, SinkSpec]] = []
        for order, spec in enumerate(specs):
            top = spec.pattern.split(".", 1)[0]
            if any(ch in top for ch in "*?["):
                anywhere.append((order, spec))
            else:  # ``top.*.send`` matches only names whose first part is ``top``
                by_top.setdefault(top, []).append((order, spec))
        #: per package, its patterns and the ones that can match any package, merged in order once
        self._by_top = {top: [spec for _, spec in sorted([*own, *anywhere], key=lambda pair: pair[0])]
                        for top, own in by_top.items()}
        self._anywhere = [spec for _, spec in anywhere]

    def matching(self, name: str) -> Iterable[SinkSpec]:
        """The specs whose pattern matches ``name``, in the order given."""
        tried = self._by_top.get(name.split(".", 1)[0], self._anywhere)
        return (spec for spec in tried if _glob(spec.pattern).match(name))


class EffectModel:
    """Classifies calls as effects; one instance per scan (it carries the user's sinks)."""

    def __init__(
        self,
        extra_sinks: Iterable[str] = (),
        safe_calls: Iterable[str] = (),
        *,
        safe_urls: Iterable[str] = (),
        read_only_tools: Iterable[str] = ("get_*", "list_*", "search_*", "read_*"),
    ) -> None:
        self._sinks = SinkIndex([*(SinkSpec(p, "configured") for p in extra_sinks), *BUILTIN_SINKS])
        self._name_only = {s.pattern: s for s in NAME_ONLY_SINKS}
        self._safe = [_glob(p) for p in safe_calls]
        self._safe_urls = [_glob(p) for p in safe_urls]
        self._read_only_tools = [_glob(p) for p in read_only_tools]

    def classify(self, call: CallInfo, module: ModuleFacts, resolver: Resolver) -> Effect | None:
        """The effect ``call`` performs, or None (not an effect, or keyed by an idempotency key)."""
        node = call.node
        names = resolver.call_names(node, call.function)
        if any(p.match(n) for p in self._safe for n in names):
            return None
        effect = self._match(node, names) or google_chain_write(node, resolver, call.function) or _orm_session_commit(call)
        if effect is None and resolver.project is not None and isinstance(node.func, cst.Attribute):
            # framework knowledge, imported lazily (the frameworks package builds on this module)
            from resume_audit.frameworks.langchain_tools import mcp_adapter_tool_run

            runs = mcp_adapter_tool_run(node, call.function, module, resolver.project)
            if runs is not None:
                effect = Effect("mcp", f"{runs} ({module.code(node.func)})", MCP_ADAPTER_CONSEQUENCE)
        if effect is None:
            return None
        if effect.kind == "http" and self._reads_only(node, resolver, call.function):
            return None
        if effect.kind == "sql" and _commit_of_upserts_only(call):
            return None
        if effect.kind == "subprocess" and _local_read_command(node, resolver, call.function):
            return None
        if effect.kind == "mcp" and self.tool_reads_only(string_value(argument(node, 0, "name"))):
            return None
        if is_keyed(node, resolver, call.function):
            return None
        return effect

    def tool_reads_only(self, name: str | None) -> bool:
        """A tool whose name says it only reads (``get_*``, ``list_*``, ... or configured)."""
        return name is not None and any(p.match(name) for p in self._read_only_tools)

    def _reads_only(self, node: cst.Call, resolver: Resolver, scope: FunctionInfo | None) -> bool:
        """A POST that is a model call (embeddings, completions) or to a URL configured as a read."""
        url = url_text(argument(node, 0, "url"), resolver, scope)
        if url is None:
            return False
        if _MODEL_ENDPOINT.search(url) or _SET_ENDPOINT.search(url):
            return True
        return any(p.match(url) for p in self._safe_urls)

    def _match(self, node: cst.Call, names: set[str]) -> Effect | None:
        for name in sorted(names):
            for spec in self._sinks.matching(name):
                if spec.when is None or spec.when(node):
                    return Effect(spec.kind, name, spec.consequence)
        if isinstance(node.func, cst.Attribute):
            named = self._name_only.get(node.func.attr.value)
            if named is not None and (named.when is None or named.when(node)):
                return Effect(named.kind, f".{node.func.attr.value}()", named.consequence)
        return None


#: POSTs that are model calls, not effects: OpenAI-compatible, Anthropic, Ollama, Gemini,
#: Cohere/TEI rerank and embedding endpoints
_MODEL_ENDPOINT = re.compile(
    r"(/embeddings?|/chat/completions|/completions|/v1/messages|/v1/responses|/api/generate|/api/chat|/api/embed\w*"
    r"|:generateContent|:streamGenerateContent|:embedContent|/rerank|/v1/embed)(\?|/?$)"
)


#: REST endpoints whose POST adds members to a set (GitHub's issue assignees and labels): a
#: repeat leaves the same set
_SET_ENDPOINT = re.compile(r"/issues/[^/]+/(assignees|labels)(\?|/?$)")


def url_text(expr: cst.BaseExpression | None, resolver: Resolver, scope: FunctionInfo | None, depth: int = 0) -> str | None:
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


def google_chain_write(node: cst.Call, resolver: Resolver, scope: FunctionInfo | None) -> Effect | None:
    """``service.users().messages().send(userId="me", body=b).execute()``: the ``.execute()``
    of a mutating method of a Google API discovery client, however long the fluent chain,
    also when the request is bound to a name first (``req = yt.videos().insert(...)``;
    ``req.execute()`` or a resumable ``req.next_chunk()``). Recognised by shape: a chain of
    at least two calls ending in a mutating method, executed with no positional argument
    (a SQL cursor's ``execute`` always has one)."""
    func = node.func
    if not (isinstance(func, cst.Attribute) and func.attr.value in ("execute", "next_chunk")):
        return None
    if any(a.keyword is None and a.star == "" for a in node.args):
        return None
    request = func.value
    if isinstance(request, cst.Name):
        found = resolver.binding_value(request.value, scope, None)
        if found is None or found[0].kind != "assign":
            return None
        request = found[0].value
    if not (isinstance(request, cst.Call) and isinstance(request.func, cst.Attribute)):
        return None
    method = request.func.attr.value
    if method not in GOOGLE_WRITE_METHODS:
        return None
    resource_call = request.func.value
    if not (isinstance(resource_call, cst.Call) and isinstance(resource_call.func, cst.Attribute)):
        return None
    resource = resource_call.func.attr.value
    chain = _chain_text(request)
    consequence = GOOGLE_CONSEQUENCES.get((resource, method), f"repeats the Google API {resource}().{method}() write")
    return Effect("saas", f"{chain}.execute()", consequence)


def _chain_text(call: cst.Call) -> str:
    """``users().messages().send()`` for a fluent chain (arguments elided)."""
    parts = []
    cur: cst.BaseExpression = call
    while isinstance(cur, cst.Call) and isinstance(cur.func, cst.Attribute):
        parts.append(f"{cur.func.attr.value}()")
        cur = cur.func.value
    return ".".join(reversed(parts))


#: ``merge`` is not here: it is an upsert by primary key, a re-run leaves one row
_ORM_STAGING = frozenset({"add", "add_all", "delete", "bulk_save_objects"})


def _commit_of_upserts_only(call: CallInfo) -> bool:
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
        and g.attr.value in (_ORM_STAGING | {"merge", "execute", "exec"})
    ]
    return bool(staged) and all(m == "merge" for m in staged)


#: commands that only read or work in a local checkout: a re-run repeats nothing outside
_LOCAL_READ_COMMANDS = frozenset(
    {"ls", "cat", "grep", "rg", "find", "head", "tail", "wc", "diff", "echo", "pwd", "which", "file", "stat",
     "bandit", "ruff", "flake8", "pylint", "mypy", "pyright", "semgrep", "eslint", "tsc", "black", "cloc", "tree",
     "pytest", "py_compile", "compileall"}
)
_GIT_READ_SUBCOMMANDS = frozenset(
    {"clone", "fetch", "checkout", "switch", "grep", "diff", "log", "show", "status", "rev-parse", "ls-files",
     "ls-tree", "blame", "branch", "describe", "cat-file", "config", "remote", "submodule", "worktree", "sparse-checkout"}
)


def _local_read_command(call: cst.Call, resolver: Resolver, scope: FunctionInfo | None) -> bool:
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


def _command_words(expr: cst.BaseExpression | None, resolver: Resolver, scope: FunctionInfo | None, depth: int = 0) -> list[str]:
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


def _orm_session_commit(call: CallInfo) -> Effect | None:
    """``session.add(row)`` ... ``session.commit()`` on a session whose type is unknown (an
    untyped parameter, a dependency-injected ``db``): the commit is the durable write."""
    f = call.node.func
    fn = call.function
    if fn is None or not (isinstance(f, cst.Attribute) and f.attr.value in ("commit", "flush")):
        return None
    receiver = f.value
    if not isinstance(receiver, cst.Name):
        return None
    for other in fn.calls:
        g = other.node.func
        if (
            isinstance(g, cst.Attribute)
            and g.attr.value in _ORM_STAGING
            and isinstance(g.value, cst.Name)
            and g.value.value == receiver.value
            and other.order < call.order
        ):
            return Effect("sql", f"{receiver.value}.{f.attr.value}() after {receiver.value}.{g.attr.value}(...)")
    return None


def is_keyed(call: cst.Call, resolver: Resolver, scope: FunctionInfo | None) -> bool:
    """Is this effect call keyed by an idempotency key (so a re-run is deduplicated)?"""
    for arg in call.args:
        if arg.keyword is not None and _KEY_KEYWORD.search(arg.keyword.value):
            return True
    for header_kw in ("headers", "extra_headers"):
        header = keyword(call, header_kw)
        if header is not None and _headers_carry_key(header.value, resolver, scope):
            return True
    return False


def _headers_carry_key(expr: cst.BaseExpression, resolver: Resolver, scope: FunctionInfo | None) -> bool:
    if isinstance(expr, cst.Dict):
        for key, value in dict_items(expr):
            if key is not None and _KEY_HEADER.match(key):
                return True
            if key is None and _headers_carry_key(value, resolver, scope):
                return True
        return False
    if isinstance(expr, cst.Call):
        return any(a.keyword is not None and _KEY_KEYWORD.search(a.keyword.value) for a in expr.args) or any(
            isinstance(a.value, cst.Dict) and _headers_carry_key(a.value, resolver, scope) for a in expr.args
        )
    if isinstance(expr, cst.Name):
        found = resolver.binding_value(expr.value, scope, None) if scope is not None else None
        if found is not None and _headers_carry_key(found[0].value, resolver, found[1]):
            return True
        # headers["Idempotency-Key"] = ... in the same function
        if scope is not None:
            for sub in subscript_keys_assigned(scope.node.body, expr.value):
                if _KEY_HEADER.match(sub):
                    return True
    return False


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


def graphql_read_call(call: cst.Call, callee: FunctionInfo, resolver: Resolver, scope: FunctionInfo | None) -> bool:
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
    r"unminimize|clear|archive|unarchive|add\w*Labels?|add\w*Assignees?)", re.IGNORECASE
)
