"""Fake credentials, so a program that builds its clients at import time can be imported in a sweep child.

Agent code constructs its clients at module level -- ``llm = ChatOpenAI()``,
``client = OpenAI()``, ``anthropic.Anthropic()``, ``boto3.client("s3")`` -- and
those constructors refuse to run without a key (or a region) in the
environment. The sweep never lets a call through (model calls are answered by
the LLM stub, effects by recorders, the sandbox refuses the network), so a
placeholder is enough for the import to succeed. Only variables the
environment does not already set are filled: a user's real test credentials
stay as they are.

The child environment is built in :mod:`resume_audit.dynamic.child.env`; this
module only holds the table (:data:`FAKE_CREDENTIALS`) and :func:`apply`.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

#: a value no real service accepts, recognisable in a log
PLACEHOLDER = "resume-audit-fake-credential"

#: variable -> placeholder: model providers, cloud SDKs, and the SaaS clients agent code builds at import
FAKE_CREDENTIALS: dict[str, str] = {
    # model providers (LangChain chat models and the vendors' own SDKs read these in their constructors)
    **{
        name: PLACEHOLDER
        for name in (
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "GOOGLE_API_KEY",
            "GEMINI_API_KEY",
            "GROQ_API_KEY",
            "MISTRAL_API_KEY",
            "COHERE_API_KEY",
            "CO_API_KEY",
            "TOGETHER_API_KEY",
            "FIREWORKS_API_KEY",
            "DEEPSEEK_API_KEY",
            "XAI_API_KEY",
            "AZURE_OPENAI_API_KEY",
            "OPENROUTER_API_KEY",
            "PERPLEXITY_API_KEY",
            "PPLX_API_KEY",
            "HUGGINGFACEHUB_API_TOKEN",
            "HF_TOKEN",
            "NVIDIA_API_KEY",
            "VOYAGE_API_KEY",
            "REPLICATE_API_TOKEN",
        )
    },
    "AZURE_OPENAI_ENDPOINT": "https://resume-audit.invalid",
    "OPENAI_API_VERSION": "2024-06-01",
    # AWS: boto3.client(...) needs credentials to sign and a region to build at all
    "AWS_ACCESS_KEY_ID": "AKIARESUMEAUDITFAKE0",
    "AWS_SECRET_ACCESS_KEY": PLACEHOLDER,
    "AWS_DEFAULT_REGION": "us-east-1",
    # search, vector stores and SaaS SDKs agents build at import
    **{
        name: PLACEHOLDER
        for name in (
            "TAVILY_API_KEY",
            "SERPAPI_API_KEY",
            "SERPER_API_KEY",
            "EXA_API_KEY",
            "BRAVE_API_KEY",
            "PINECONE_API_KEY",
            "QDRANT_API_KEY",
            "WEAVIATE_API_KEY",
            "STRIPE_API_KEY",
            "SENDGRID_API_KEY",
            "SLACK_BOT_TOKEN",
            "SLACK_TOKEN",
            "TWILIO_AUTH_TOKEN",
            "GITHUB_TOKEN",
            "NOTION_API_KEY",
            "LANGSMITH_API_KEY",
            "LANGCHAIN_API_KEY",
            "FIRECRAWL_API_KEY",
            "E2B_API_KEY",
        )
    },
    "TWILIO_ACCOUNT_SID": "AC00000000000000000000000000000000",
}


def apply(environ: MutableMapping[str, str] | None = None) -> list[str]:
    """Fill every variable of :data:`FAKE_CREDENTIALS` the environment lacks; the names filled."""
    env = os.environ if environ is None else environ
    filled = [name for name in FAKE_CREDENTIALS if not env.get(name)]
    for name in filled:
        env[name] = FAKE_CREDENTIALS[name]
    return filled
