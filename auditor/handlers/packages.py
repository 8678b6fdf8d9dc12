"""The packages that make a module serve requests or consume a queue, as plain data.

Kept apart from :mod:`resume_audit.handlers.web` (which needs LibCST) so a scan knows, before
it reads any file, which import phrases the web index will search every file for
(:mod:`resume_audit.reading.treewords`).
"""

from __future__ import annotations

from resume_audit.reading.prefilter import import_words

#: Top-level packages whose import marks a module as (part of) a served app.
HTTP_PACKAGES = (
    "fastapi",
    "starlette",
    "flask",
    "quart",
    "django",
    "rest_framework",
    "aiohttp",
    "litestar",
    "sanic",
    "langserve",
    "chainlit",
    "gradio",
    "streamlit",
    "mcp",
    "fastmcp",
)
QUEUE_PACKAGES = (
    "celery",
    "dramatiq",
    "kafka",
    "aiokafka",
    "confluent_kafka",
    "pika",
    "aio_pika",
    "google.cloud.pubsub",
    "google.cloud.pubsub_v1",
)
#: SQS pollers: ``receive_message`` on a boto3 client
SQS_PACKAGES = ("boto3", "aioboto3")

#: the text of a module that can serve: an import of one of the packages above, or a
#: Lambda-style ``handler(event, context)``
SERVING_WORDS = (
    *import_words((*HTTP_PACKAGES, *QUEUE_PACKAGES, *SQS_PACKAGES)),
    "event, context",
)
