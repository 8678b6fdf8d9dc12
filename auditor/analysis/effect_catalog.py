"""The effect table: which calls write to the world, what a repeat does, which accept a key.

One table, :data:`EFFECT_SINKS`, one :class:`Sdk` entry per SDK or family of libraries: its
modules, how a client is obtained, the calls that write, what a repeat does in the user's words
("sends the Gmail message again"), the methods recognised whatever the receiver, the
idempotency key it accepts -- and, for the APIs the EO rules' fix can key, the facts the fix
relies on beside them (:class:`KeyedApi`). The effect model (:mod:`resume_audit.analysis.effects`)
matches it, ``resume-audit effects`` lists it, the fix (:mod:`resume_audit.fixes.idempotency_key`)
reads its keys: every other table is derived from it here.

Agents rarely call ``requests.post`` in a node body. They send Gmail through a Google discovery
client, post to Slack, create Salesforce Tasks, Notion pages, GitHub issues. Each SDK's writes
are listed as fnmatch globs over resolved qualified names (``*`` spans dots), the way the effect
model matches them: a client built as ``WebClient(token=...)`` has type ``slack_sdk.WebClient``,
so its ``chat_postMessage`` resolves to ``slack_sdk.WebClient.chat_postMessage``. ``methods`` are
distinctive method names also recognised when the receiver's type is unknown (a client passed
in as an untyped parameter); only names that mean "write" in every SDK that uses them go there.
The generic families (HTTP clients, payments, email, brokers, cloud SDKs, SQL, files and
processes) spell out hundreds of patterns, some with an argument check
(:mod:`resume_audit.analysis.sink_checks`), which their listing abbreviates; they are matched
after every SDK entry, so an SDK's precise consequence wins.

Reads stay reads: ``list``, ``get``, ``search``, ``conversations_history`` are
not in any entry. To add an SDK, add an entry (docs/effects.md says how) or,
without a release, list its calls in ``[tool.resume-audit] effects``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Callable

from resume_audit.analysis.sink_checks import method_is_mutating, mode_writes, sql_argument_writes, urlopen_sends_data

if TYPE_CHECKING:
    import libcst as cst


@dataclass(frozen=True)
class SinkSpec:
    """One matched call: a glob over qualified names (or a bare method name, matched whatever
    the receiver), its kind of effect, an argument check, and what a repeat does."""

    pattern: str
    kind: str
    #: extra check on the call's arguments (e.g. a write mode for ``open``)
    when: Callable[[cst.Call], bool] | None = None
    consequence: str = ""


@dataclass(frozen=True)
class Write:
    """One write operation of an SDK, as listed."""

    #: fnmatch globs over qualified names
    patterns: tuple[str, ...]
    #: what a repeat does, in the user's words: "sends the Slack message again"
    consequence: str
    #: distinctive method names matched whatever the receiver (see the module docstring)
    methods: tuple[str, ...] = ()


@dataclass(frozen=True)
class KeyedApi:
    """Calls that take an idempotency key as a keyword argument, so a re-run that repeats the call
    can carry the same key and the provider answers it without acting twice. The EO rules' fix
    (:mod:`resume_audit.fixes.idempotency_key`) passes one; only APIs checked against the
    SDK's own code are listed."""

    sdk: str
    #: fnmatch globs over resolved qualified names (``*`` spans dots) of the calls that take it
    patterns: tuple[str, ...]
    #: names matching these are another calling convention of the same SDK (not this keyword)
    excluded: tuple[str, ...]
    #: the keyword argument
    keyword: str
    #: how long the provider remembers a key: a repeat after that acts again
    retention: str
    #: what was checked, and against which release
    evidence: str


@dataclass(frozen=True)
class Sdk:
    """One entry of the effect table: an SDK, or a family of libraries."""

    name: str
    #: top-level import names
    modules: tuple[str, ...]
    #: how a client is obtained (documentation)
    client: str
    kind: str
    writes: tuple[Write, ...]
    #: the idempotency key the SDK accepts, if any (documentation and the fix text)
    idempotency_key: str | None = None
    #: the APIs among its calls whose key the EO rules' fix passes
    keyed: tuple[KeyedApi, ...] = ()
    #: a family whose listed writes only describe what is matched: the calls and the methods
    #: matched whatever the receiver, spelled out (None: the writes' own patterns and methods)
    calls: tuple[SinkSpec, ...] | None = None
    any_receiver: tuple[SinkSpec, ...] | None = None
    #: matched after every entry that is not (a generic family: an SDK's precise consequence wins)
    generic: bool = False

    def matched(self) -> tuple[SinkSpec, ...]:
        """The calls matched as qualified names, in order."""
        if self.calls is not None:
            return self.calls
        return tuple(
            SinkSpec(p, self.kind, None, w.consequence)
            for w in self.writes
            for p in w.patterns
            if not p.startswith("<")
        )

    def matched_methods(self) -> tuple[SinkSpec, ...]:
        """The method names matched whatever the receiver."""
        if self.any_receiver is not None:
            return self.any_receiver
        return tuple(SinkSpec(m, self.kind, None, w.consequence) for w in self.writes for m in w.methods)


#: Google API discovery clients (``googleapiclient.discovery.build``): the effect is the
#: ``.execute()`` of a mutating method however long the fluent chain. Recognised by the
#: chain's shape (see :func:`resume_audit.analysis.effect_shapes.google_chain_write`), since the
#: client is usually built in a helper and passed around untyped.
GOOGLE_WRITE_METHODS: dict[str, str] = {
    "send": "sends the message again",
    "insert": "inserts a second copy",
    "create": "creates a second one",
    "import_": "imports it again",
    "copy": "copies it again",
    "append": "appends the rows again",
    "batchUpdate": "applies the batch update again",
    "update": "overwrites it again",
    "patch": "patches it again",
    "delete": "deletes again (the second call fails)",
    "trash": "trashes it again",
    "move": "moves it again",
    "quickAdd": "adds a second event",
    "emptyTrash": "empties the trash again",
}

#: (resource, method) -> a more precise consequence for the common Google calls
GOOGLE_CONSEQUENCES: dict[tuple[str, str], str] = {
    ("messages", "send"): "sends the Gmail message again",
    ("drafts", "send"): "sends the Gmail draft again",
    ("drafts", "create"): "creates a second Gmail draft",
    ("events", "insert"): "creates a second Calendar event (and re-sends its invitations)",
    ("events", "quickAdd"): "creates a second Calendar event",
    ("events", "patch"): "patches the Calendar event again (and re-notifies attendees)",
    ("events", "update"): "updates the Calendar event again (and re-notifies attendees)",
    ("events", "delete"): "deletes the Calendar event again (the second call fails)",
    ("files", "create"): "creates a second Drive file",
    ("files", "copy"): "creates a second copy of the Drive file",
    ("values", "append"): "appends the Sheets rows again",
    ("videos", "insert"): "uploads the YouTube video again",
    ("documents", "batchUpdate"): "applies the Docs edits again (inserted text appears twice)",
    ("spreadsheets", "batchUpdate"): "applies the Sheets batch update again",
}

#: what a repeated run of langgraph ToolNodes / prebuilt agents over MCP adapter tools does
#: (matched in :mod:`resume_audit.analysis.effects`, which needs the project to trace the tools)
MCP_ADAPTER_CONSEQUENCE = "calls the MCP tool the model picked again (whatever it does on the server side)"

_HTTP_VERBS = ("post", "put", "patch", "delete")

#: The table. The generic families first (``resume-audit effects`` lists them first), then the SDKs.
EFFECT_SINKS: tuple[Sdk, ...] = (
    Sdk(
        "HTTP clients",
        ("requests", "httpx", "aiohttp", "urllib3", "urllib"),
        "requests.Session() / httpx.Client()",
        "http",
        (
            Write(
                (
                    "requests.post|put|patch|delete",
                    "httpx.*.post|put|patch|delete",
                    "aiohttp.ClientSession.post|...",
                    "*.request(method=POST|PUT|PATCH|DELETE)",
                    "urllib.request.urlopen(data=...)",
                ),
                "sends the HTTP request again (POSTs to model endpoints such as /embeddings and /chat/completions, "
                "GraphQL queries, and URLs listed in safe-urls are reads)",
            ),
        ),
        "an `Idempotency-Key` header where the API honours one",
        calls=(
            *(
                SinkSpec(f"{lib}.{verb}", "http")
                for lib in ("requests", "requests.api", "httpx")
                for verb in _HTTP_VERBS
            ),
            *(
                SinkSpec(f"{lib}.request", "http", method_is_mutating(0))
                for lib in ("requests", "requests.api", "httpx")
            ),
            *(
                SinkSpec(f"{cls}.{verb}", "http")
                for cls in (
                    "requests.Session",
                    "requests.session",
                    "requests.sessions.Session",
                    "httpx.Client",
                    "httpx.AsyncClient",
                    "aiohttp.ClientSession",
                    "aiohttp.client.ClientSession",
                )
                for verb in _HTTP_VERBS
            ),
            *(
                SinkSpec(f"{cls}.request", "http", method_is_mutating(0))
                for cls in (
                    "requests.Session",
                    "requests.session",
                    "httpx.Client",
                    "httpx.AsyncClient",
                    "aiohttp.ClientSession",
                )
            ),
            SinkSpec("urllib3.PoolManager.request", "http", method_is_mutating(0)),
            SinkSpec("urllib3.request", "http", method_is_mutating(0)),
            SinkSpec("urllib.request.urlopen", "http", urlopen_sends_data),
        ),
        any_receiver=(),
        generic=True,
    ),
    Sdk(
        "Payments (stripe, braintree, paypalrestsdk, square, Adyen)",
        ("stripe", "braintree", "paypalrestsdk", "square", "Adyen"),
        "stripe.api_key = ... / StripeClient(...)",
        "payment",
        (
            Write(
                (
                    "stripe.*.create|confirm|capture|refund|...",
                    "braintree.*.sale|refund|...",
                    "paypalrestsdk.*.create|execute",
                ),
                "moves the money again (a second charge or refund)",
            ),
        ),
        "Stripe: `idempotency_key=`",
        keyed=(
            KeyedApi(
                "Stripe",
                # resource classes: stripe.PaymentIntent.create, stripe.checkout.Session.create, ..._async
                ("stripe.[A-Z]*.*", "stripe.*.[A-Z]*.*"),
                # StripeClient services take request options in an options={...} dict instead
                ("*StripeClient*", "*StripeObject*"),
                "idempotency_key",
                "at least 24 hours",  # keys of up to 255 characters: the fix hashes its parts
                "stripe 16.1.0: every resource method's params extend RequestOptions, whose idempotency_key "
                "is split off (_request_options.extract_options_from_dict) and sent as the Idempotency-Key header",
            ),
        ),
        calls=(
            *(
                SinkSpec(f"stripe.*.{verb}", "payment")
                for verb in (
                    "create",
                    "confirm",
                    "capture",
                    "cancel",
                    "modify",
                    "update",
                    "delete",
                    "pay",
                    "refund",
                    "finalize_invoice",
                    "void_invoice",
                    "send_invoice",
                    "mark_uncollectible",
                    "attach",
                    "detach",
                    "create_async",
                    "confirm_async",
                    "capture_async",
                    "pay_async",
                )
            ),
            *(
                SinkSpec(f"braintree.*.{verb}", "payment")
                for verb in ("sale", "refund", "submit_for_settlement", "void", "create")
            ),
            SinkSpec("paypalrestsdk.*.create", "payment"),
            SinkSpec("paypalrestsdk.*.execute", "payment"),
            SinkSpec("square.*.create_payment", "payment"),
            SinkSpec("Adyen.*.payments", "payment"),
        ),
        any_receiver=(),
        generic=True,
    ),
    Sdk(
        "Email (smtplib, yagmail, django.core.mail, flask_mail, fastapi_mail)",
        ("smtplib", "yagmail", "django", "flask_mail", "fastapi_mail"),
        "smtplib.SMTP(host)",
        "email",
        (Write(("smtplib.SMTP.sendmail|send_message", "django.core.mail.send_mail"), "sends the email again"),),
        calls=(
            *(
                SinkSpec(f"smtplib.{c}.{m}", "email")
                for c in ("SMTP", "SMTP_SSL", "LMTP")
                for m in ("sendmail", "send_message")
            ),
            SinkSpec("yagmail.SMTP.send", "email"),
            SinkSpec("sendgrid.*.send", "email"),
            SinkSpec("django.core.mail.send_mail", "email"),
            SinkSpec("django.core.mail.send_mass_mail", "email"),
            SinkSpec("django.core.mail.EmailMessage.send", "email"),
            SinkSpec("resend.Emails.send", "email"),
            SinkSpec("flask_mail.Mail.send", "email"),
            SinkSpec("fastapi_mail.FastMail.send_message", "email"),
        ),
        any_receiver=(SinkSpec("sendmail", "email"),),
        generic=True,
    ),
    Sdk(
        "Message brokers (kafka, pika, pubsub, redis, celery, nats)",
        ("kafka", "confluent_kafka", "pika", "google.cloud.pubsub", "redis", "celery", "nats"),
        "KafkaProducer(...) / channel / redis.Redis()",
        "message",
        (
            Write(
                (
                    "kafka.KafkaProducer.send",
                    "*.basic_publish",
                    "google.cloud.pubsub*.publish",
                    "redis.*.publish|xadd|lpush|incr",
                    "*.apply_async",
                    "celery.*.send_task",
                ),
                "publishes the message again",
            ),
        ),
        "SQS FIFO: `MessageDeduplicationId=`",
        calls=(
            SinkSpec("kafka.KafkaProducer.send", "message"),
            SinkSpec("confluent_kafka.Producer.produce", "message"),
            SinkSpec("aiokafka.AIOKafkaProducer.send*", "message"),
            SinkSpec("*.basic_publish", "message"),
            SinkSpec("aio_pika.*.publish", "message"),
            SinkSpec("google.cloud.pubsub*.publish", "message"),
            *(
                SinkSpec(f"redis.*.{m}", "message")
                for m in ("publish", "xadd", "lpush", "rpush", "incr", "incrby", "decr", "decrby", "hincrby")
            ),
            SinkSpec("slack_sdk.*.chat_postMessage", "message"),
            SinkSpec("slack_sdk.*.chat_postEphemeral", "message"),
            SinkSpec("slack_sdk.*.files_upload*", "message"),
            SinkSpec("twilio.*.messages.create", "message"),
            SinkSpec("telegram.*.send_message", "message"),
            SinkSpec("nats.*.publish", "message"),
            SinkSpec("*.apply_async", "message"),
            SinkSpec("celery.*.send_task", "message"),
        ),
        # (``chat_postMessage`` on any receiver keeps this family's consequence: methods are
        # claimed by the first entry that names them, and the families come first)
        any_receiver=(
            SinkSpec("basic_publish", "message"),
            SinkSpec("chat_postMessage", "message"),
            SinkSpec("apply_async", "message"),
        ),
        generic=True,
    ),
    Sdk(
        "Cloud SDK writes (boto3, google-cloud-storage/firestore, azure blob)",
        ("boto3", "google.cloud", "azure"),
        "boto3.client('s3') / storage.Client()",
        "cloud",
        (
            Write(
                (
                    "boto3.*.put_object|put_item|send_message|publish|send_email|invoke|...",
                    "google.cloud.storage.*.upload_from_*",
                    "google.cloud.firestore.*.set|add|update|delete",
                    "azure.storage.blob.*.upload_blob|delete_blob",
                ),
                "repeats the cloud write",
            ),
        ),
        "AWS: `ClientToken=` / `ClientRequestToken=`",
        calls=(
            *(
                SinkSpec(f"boto3.*.{m}", "cloud")
                for m in (
                    "put_object",
                    "delete_object",
                    "delete_objects",
                    "copy_object",
                    "upload_file",
                    "upload_fileobj",
                    "put_item",
                    "update_item",
                    "delete_item",
                    "batch_write_item",
                    "transact_write_items",
                    "send_message",
                    "send_message_batch",
                    "publish",
                    "send_email",
                    "send_raw_email",
                    "send_templated_email",
                    "put_events",
                    "put_record",
                    "put_records",
                    "start_execution",
                    "invoke",
                )
            ),
            SinkSpec("boto3.resource.Object.put", "cloud"),
            SinkSpec("boto3.resource.Object.delete", "cloud"),
            *(
                SinkSpec(f"google.cloud.storage.*.{m}", "cloud")
                for m in ("upload_from_string", "upload_from_filename", "upload_from_file", "delete")
            ),
            *(SinkSpec(f"google.cloud.firestore.*.{m}", "cloud") for m in ("set", "add", "update", "delete", "create")),
            *(SinkSpec(f"azure.storage.blob.*.{m}", "cloud") for m in ("upload_blob", "delete_blob")),
        ),
        any_receiver=(),
        generic=True,
    ),
    Sdk(
        "SQL writes",
        ("sqlite3", "psycopg", "sqlalchemy", "pymongo", "django"),
        "cursor / session / collection",
        "sql",
        (
            Write(
                (
                    "*.execute('INSERT|UPDATE|DELETE ...')",
                    "session.add(...); session.commit()",
                    "*.objects.create",
                    "pymongo.*.insert_one|update_one|...",
                ),
                "repeats the database write (upserts from the statement's own values and merge-only commits are not reported)",
            ),
        ),
        "`INSERT ... ON CONFLICT DO NOTHING` / a unique key",
        calls=(
            SinkSpec("*.execute", "sql", sql_argument_writes),
            SinkSpec("*.executemany", "sql", sql_argument_writes),
            SinkSpec("*.executescript", "sql", sql_argument_writes),
            SinkSpec("*.exec_driver_sql", "sql", sql_argument_writes),
            SinkSpec("sqlalchemy.orm.*.commit", "sql"),
            SinkSpec("sqlalchemy.ext.asyncio.*.commit", "sql"),
            SinkSpec("sqlmodel.*.commit", "sql"),
            SinkSpec("*.objects.create", "sql"),
            SinkSpec("*.objects.bulk_create", "sql"),
            *(
                SinkSpec(f"{lib}.*.{m}", "sql")
                for lib in ("pymongo", "motor")
                for m in (
                    "insert_one",
                    "insert_many",
                    "update_one",
                    "update_many",
                    "delete_one",
                    "delete_many",
                    "replace_one",
                )
            ),
        ),
        any_receiver=(
            SinkSpec("insert_one", "sql"),
            SinkSpec("insert_many", "sql"),
            SinkSpec("execute", "sql", sql_argument_writes),
            SinkSpec("executemany", "sql", sql_argument_writes),
            SinkSpec("executescript", "sql", sql_argument_writes),
        ),
        generic=True,
    ),
    Sdk(
        "Files and processes",
        ("builtins", "os", "shutil", "pathlib", "subprocess"),
        "-",
        "file",
        (
            Write(
                (
                    "open(..., 'a'|'x')",
                    "os.remove|rename",
                    "shutil.rmtree|move",
                    "subprocess.run|Popen, asyncio.create_subprocess_exec (except commands that only read, work on a"
                    " local copy, install into a local environment or say what they would do (--dry-run); a helper"
                    " running its caller's words is judged at each call)",
                ),
                "repeats the file change / runs the command again (overwrites with 'w' replay harmlessly)",
            ),
        ),
        calls=(
            *(
                SinkSpec(f"{fn}", "file", mode_writes)
                for fn in ("builtins.open", "io.open", "codecs.open", "aiofiles.open", "os.fdopen")
            ),
            *(
                SinkSpec(f"pathlib.*.{m}", "file")
                for m in ("write_text", "write_bytes", "unlink", "rename", "replace", "rmdir")
            ),
            *(
                SinkSpec(f"os.{m}", "file")
                for m in ("remove", "unlink", "rename", "replace", "rmdir", "removedirs", "truncate")
            ),
            *(SinkSpec(f"shutil.{m}", "file") for m in ("rmtree", "move", "copy", "copy2", "copyfile", "copytree")),
            *(
                SinkSpec(f"subprocess.{m}", "subprocess")
                for m in ("run", "call", "check_call", "check_output", "Popen", "getoutput", "getstatusoutput")
            ),
            *(SinkSpec(f"os.{m}", "subprocess") for m in ("system", "popen", "exec*", "spawn*", "posix_spawn*")),
            SinkSpec("asyncio.create_subprocess_*", "subprocess"),
        ),
        any_receiver=(SinkSpec("write_text", "file"), SinkSpec("write_bytes", "file")),
        generic=True,
    ),
    Sdk(
        "Google APIs (Gmail, Calendar, Drive, Sheets, Docs, YouTube)",
        ("googleapiclient",),
        'service = build("gmail", "v1", credentials=creds)',
        "saas",
        (
            Write(
                ("<discovery chain>.send|insert|create|append|batchUpdate|patch|update|delete(...).execute()",),
                "repeats the Google API write",
            ),
        ),
        "none for most methods (Calendar accepts a client-chosen event `id`; Gmail has none)",
    ),
    Sdk(
        "Slack (slack_sdk, slack_bolt)",
        ("slack_sdk", "slack_bolt", "slack"),
        "client = WebClient(token=...) / AsyncWebClient / app.client",
        "message",
        (
            Write(
                ("slack_sdk.*.chat_postMessage", "slack_bolt.*.chat_postMessage", "slack.*.chat_postMessage"),
                "posts the Slack message again",
                ("chat_postMessage",),
            ),
            Write(
                ("slack_sdk.*.chat_postEphemeral", "slack_sdk.*.chat_scheduleMessage", "slack_sdk.*.chat_meMessage"),
                "posts the Slack message again",
                ("chat_postEphemeral", "chat_scheduleMessage"),
            ),
            Write(
                ("slack_sdk.*.files_upload*", "slack_bolt.*.files_upload*"),
                "uploads the file to Slack again",
                ("files_upload_v2", "files_upload"),
            ),
            Write(
                ("slack_sdk.*.conversations_create", "slack_sdk.*.conversations_invite"),
                "creates the channel / invites again",
            ),
            Write(("slack_sdk.webhook.*.send",), "posts the Slack webhook message again"),
        ),
        "none (Slack dedupes nothing; use `client_msg_id` bookkeeping of your own)",
    ),
    Sdk(
        "Salesforce (simple_salesforce)",
        ("simple_salesforce",),
        "sf = Salesforce(username=..., password=..., security_token=...)",
        "saas",
        (
            Write(("simple_salesforce.*.create",), "creates a second Salesforce record"),
            Write(("simple_salesforce.*.update", "simple_salesforce.*.upsert"), "updates the Salesforce record again"),
            Write(("simple_salesforce.*.delete",), "deletes the Salesforce record again (the second call fails)"),
        ),
        "upsert on an external id field (`sf.Task.upsert('Ext_Id__c/KEY', {...})`)",
    ),
    Sdk(
        "Notion (notion_client)",
        ("notion_client",),
        "notion = Client(auth=...) / AsyncClient",
        "saas",
        (
            Write(("notion_client.*.pages.create",), "creates a second Notion page", ()),
            Write(("notion_client.*.blocks.children.append",), "appends the Notion blocks again"),
            Write(
                (
                    "notion_client.*.pages.update",
                    "notion_client.*.blocks.update",
                    "notion_client.*.databases.create",
                    "notion_client.*.comments.create",
                    "notion_client.*.blocks.delete",
                ),
                "repeats the Notion write",
            ),
        ),
    ),
    Sdk(
        "GitHub (PyGithub, githubkit)",
        ("github", "githubkit"),
        "gh = Github(auth=...); repo = gh.get_repo(...)",
        "saas",
        (
            Write(
                ("github.*.create_issue", "githubkit.*.create_issue"), "opens a second GitHub issue", ("create_issue",)
            ),
            Write(("github.*.create_pull",), "opens a second pull request", ("create_pull",)),
            Write(
                ("github.*.create_comment", "github.*.create_issue_comment", "github.*.create_review"),
                "posts the GitHub comment again",
                ("create_issue_comment", "create_review"),
            ),
            Write(
                ("github.*.create_file", "github.*.create_git_ref", "github.*.create_git_release", "github.*.merge"),
                "repeats the GitHub write",
                ("create_git_ref", "create_git_release"),
            ),
            Write(("githubkit.*.rest.issues.create*", "githubkit.*.rest.pulls.create*"), "repeats the GitHub write"),
        ),
    ),
    Sdk(
        "Jira (jira)",
        ("jira",),
        "jira = JIRA(server=..., basic_auth=...)",
        "saas",
        (
            Write(("jira.*.create_issue", "jira.*.create_issues"), "creates a second Jira issue"),
            Write(("jira.*.add_comment",), "adds the Jira comment again", ("add_comment",)),
            Write(
                ("jira.*.transition_issue", "jira.*.add_worklog", "jira.*.add_attachment"),
                "repeats the Jira write",
                ("transition_issue", "add_worklog"),
            ),
        ),
    ),
    Sdk(
        "HubSpot (hubspot-api-client)",
        ("hubspot",),
        "client = HubSpot(access_token=...)",
        "saas",
        (
            Write(("hubspot.*.basic_api.create", "hubspot.*.batch_api.create"), "creates a second HubSpot record"),
            Write(("hubspot.*.basic_api.update", "hubspot.*.basic_api.archive"), "repeats the HubSpot write"),
        ),
    ),
    Sdk(
        "Twilio",
        ("twilio",),
        "client = Client(account_sid, auth_token)",
        "message",
        (
            Write(("twilio.*.messages.create",), "sends the SMS again"),
            Write(("twilio.*.calls.create",), "places the phone call again"),
        ),
    ),
    Sdk(
        "SendGrid",
        ("sendgrid",),
        "sg = SendGridAPIClient(api_key)",
        "email",
        (Write(("sendgrid.*.send",), "sends the email again"),),
    ),
    Sdk(
        "Resend",
        ("resend",),
        "resend.api_key = ...",
        "email",
        (Write(("resend.Emails.send", "resend.emails.send", "resend.*.Emails.send"), "sends the email again"),),
        "`Idempotency-Key` header (`resend.Emails.send(params, {'idempotency_key': ...})`)",
    ),
    Sdk(
        "Mailgun / Postmark / Mailchimp transactional",
        ("postmarker", "mailchimp_transactional"),
        "PostmarkClient(server_token=...) / Client(api_key)",
        "email",
        (Write(("postmarker.*.emails.send*", "mailchimp_transactional.*.messages.send*"), "sends the email again"),),
    ),
    Sdk(
        "SMTP (smtplib, aiosmtplib)",
        ("smtplib", "aiosmtplib"),
        "smtplib.SMTP(host) / aiosmtplib.send(...)",
        "email",
        (
            Write(
                ("aiosmtplib.send", "aiosmtplib.SMTP.send_message", "aiosmtplib.SMTP.sendmail"), "sends the email again"
            ),
        ),
    ),
    Sdk(
        "Discord (discord.py, discord_webhook)",
        ("discord", "discord_webhook"),
        "channel = client.get_channel(...); DiscordWebhook(url=...)",
        "message",
        (
            Write(("discord.*.send", "discord.*.create_thread"), "posts the Discord message again"),
            Write(("discord_webhook.*.execute",), "posts the Discord webhook message again"),
        ),
    ),
    Sdk(
        "Telegram (python-telegram-bot, aiogram, pyTelegramBotAPI)",
        ("telegram", "aiogram", "telebot"),
        "bot = Bot(token) / application.bot",
        "message",
        (
            Write(
                (
                    "telegram.*.send_message",
                    "telegram.*.send_photo",
                    "telegram.*.send_document",
                    "aiogram.*.send_message",
                    "telebot.*.send_message",
                ),
                "sends the Telegram message again",
            ),
        ),
    ),
    Sdk(
        "Microsoft Graph / O365",
        ("msgraph", "O365"),
        "GraphServiceClient(credentials) / Account(credentials).mailbox()",
        "email",
        (
            Write(
                ("msgraph.*.send_mail.post", "msgraph.*.messages.post", "msgraph.*.events.post"),
                "sends the Outlook mail / creates the event again",
            ),
            Write(("O365.*.Message.send", "O365.*.new_message.send"), "sends the Outlook mail again"),
        ),
    ),
    Sdk(
        "MCP (Model Context Protocol clients)",
        ("mcp", "fastmcp", "langchain_mcp_adapters"),
        "async with ClientSession(read, write) as session",
        "mcp",
        (
            Write(
                ("mcp.*.call_tool", "fastmcp.*.call_tool"),
                "calls the MCP tool again (whatever it does on the server side)",
                ("call_tool",),
            ),
            Write(
                (
                    "<ToolNode(tools).invoke / create_react_agent(model, tools).invoke over MultiServerMCPClient.get_tools() "
                    "or load_mcp_tools(session) tools>",
                ),
                MCP_ADAPTER_CONSEQUENCE,
            ),
        ),
        "whatever the server's tool accepts; names starting with get_/list_/search_/read_ are treated as reads",
    ),
)

#: the generic families, and the SDKs (``resume-audit effects`` lists both, in this order)
GENERIC_SINKS: tuple[Sdk, ...] = tuple(sdk for sdk in EFFECT_SINKS if sdk.generic)
CATALOG: tuple[Sdk, ...] = tuple(sdk for sdk in EFFECT_SINKS if not sdk.generic)
#: every keyed API of the table
KEYED_APIS: tuple[KeyedApi, ...] = tuple(api for sdk in EFFECT_SINKS for api in sdk.keyed)


def keyed_api(names: set[str] | frozenset[str]) -> tuple[KeyedApi, str] | None:
    """The keyed API a call resolving to one of ``names`` belongs to, with the name that matched."""
    for api in KEYED_APIS:
        for name in sorted(names):
            if any(fnmatchcase(name, p) for p in api.patterns) and not any(fnmatchcase(name, x) for x in api.excluded):
                return api, name
    return None


def sink_specs() -> tuple[SinkSpec, ...]:
    """Every call matched by qualified name, in the order they are tried: the SDKs' first (their
    consequence is the precise one: "sends the SMS again"), then the generic families'."""
    return tuple(spec for sdk in CATALOG for spec in sdk.matched()) + tuple(
        spec for sdk in GENERIC_SINKS for spec in sdk.matched()
    )


def any_receiver_specs() -> tuple[SinkSpec, ...]:
    """Every method name matched whatever the receiver, once: the first entry naming it claims it."""
    claimed: dict[str, SinkSpec] = {}
    for sdk in EFFECT_SINKS:
        for spec in sdk.matched_methods():
            claimed.setdefault(spec.pattern, spec)
    return tuple(claimed.values())
