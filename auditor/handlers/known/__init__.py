"""The built-in handler catalog, one module per ecosystem (see :mod:`resume_audit.handlers.catalog`)."""

from __future__ import annotations

from resume_audit.handlers.catalog import HandlerShape
from resume_audit.handlers.known import apps, bots, queues, web

#: every built-in shape, web first (a function registered twice is reported by the first match)
BUILTIN: tuple[HandlerShape, ...] = (*web.SHAPES, *bots.SHAPES, *queues.SHAPES, *apps.SHAPES)
