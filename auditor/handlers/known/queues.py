"""Task queues and workers: a task runs once per message, on many workers, and again when a delivery fails.

Names checked against the public source of celery 5.4 (``Celery.task``, ``celery.shared_task``,
``celery.Task.run``), rq 2.x (``Queue.enqueue(f, ...)``, ``enqueue_call(func=...)``, ``enqueue_in(time_delta,
func)``, ``enqueue_at(datetime, f)``, ``rq.decorators.job``), arq 0.26 (``WorkerSettings.functions``,
``arq.func(coroutine)``, ``arq.cron(coroutine)``, ``Worker(functions=...)``), dramatiq 1.x (``dramatiq.actor``),
huey 2.x (``Huey.task``/``periodic_task``, ``huey.contrib.djhuey.task``), taskiq 0.11 (``broker.task``),
faststream 0.5 (``broker.subscriber``) and modal 0.6x (``App.function``).
"""

from __future__ import annotations

from resume_audit.handlers.catalog import Concurrency, HandlerShape, Registration

DECORATOR, CALL, SUBCLASS = Registration.DECORATOR, Registration.CALL, Registration.SUBCLASS_METHOD
RETRIED = Concurrency.RETRIED

CELERY_APPS = ("celery.Celery", "celery.app.Celery", "celery.app.base.Celery")
RQ_QUEUES = ("rq.Queue", "rq.queue.Queue")
HUEYS = (
    "huey.Huey",
    "huey.RedisHuey",
    "huey.SqliteHuey",
    "huey.MemoryHuey",
    "huey.PriorityRedisHuey",
    "huey.RedisExpireHuey",
)

SHAPES: tuple[HandlerShape, ...] = (
    HandlerShape(
        "Celery",
        "Celery task",
        DECORATOR,
        (
            *(f"{a}.task" for a in CELERY_APPS),
            "celery.shared_task",
            "celery.app.shared_task",
        ),
        ("celery",),
        RETRIED,
    ),
    HandlerShape(
        "Celery",
        "Celery task",
        SUBCLASS,
        ("celery.Task", "celery.app.task.Task"),
        ("celery",),
        RETRIED,
        methods=("run",),
    ),
    HandlerShape(
        "RQ",
        "RQ job",
        CALL,
        tuple(f"{q}.enqueue" for q in RQ_QUEUES) + ("django_rq.enqueue",),
        ("rq", "django_rq"),
        RETRIED,
        position=0,
        keyword="f",
    ),
    HandlerShape(
        "RQ",
        "RQ job",
        CALL,
        tuple(f"{q}.enqueue_call" for q in RQ_QUEUES),
        ("rq",),
        RETRIED,
        position=0,
        keyword="func",
    ),
    HandlerShape(
        "RQ",
        "RQ job",
        CALL,
        tuple(f"{q}.{m}" for q in RQ_QUEUES for m in ("enqueue_in", "enqueue_at")),
        ("rq",),
        RETRIED,
        position=1,
        keyword="func",
    ),
    HandlerShape(
        "RQ", "RQ job", DECORATOR, ("rq.decorators.job", "rq.job", "django_rq.job"), ("rq", "django_rq"), RETRIED
    ),
    HandlerShape(
        "arq",
        "arq job",
        CALL,
        ("arq.func", "arq.worker.func", "arq.cron", "arq.cron.cron"),
        ("arq",),
        RETRIED,
        position=0,
        keyword="coroutine",
    ),
    HandlerShape("arq", "arq job", CALL, ("arq.Worker", "arq.worker.Worker"), ("arq",), RETRIED, keyword="functions"),
    HandlerShape(
        "Dramatiq", "Dramatiq actor", DECORATOR, ("dramatiq.actor", "dramatiq.actor.actor"), ("dramatiq",), RETRIED
    ),
    HandlerShape(
        "Huey",
        "Huey task",
        DECORATOR,
        (
            *(f"{h}.{m}" for h in HUEYS for m in ("task", "periodic_task")),
            "huey.contrib.djhuey.task",
            "huey.contrib.djhuey.db_task",
            "huey.contrib.djhuey.periodic_task",
        ),
        ("huey",),
        RETRIED,
    ),
    HandlerShape(
        "taskiq",
        "taskiq task",
        DECORATOR,
        ("taskiq*Broker.task",),
        ("taskiq", "taskiq_redis", "taskiq_aio_pika"),
        RETRIED,
    ),
    HandlerShape(
        "FastStream",
        "FastStream subscriber",
        DECORATOR,
        ("faststream.*Broker.subscriber", "faststream.*Router.subscriber"),
        ("faststream",),
        RETRIED,
    ),
    HandlerShape(
        "Modal",
        "Modal function",
        DECORATOR,
        ("modal.App.function", "modal.Stub.function", "modal.fastapi_endpoint", "modal.web_endpoint"),
        ("modal",),
    ),
)

#: arq's worker settings: a class of this name whose ``functions`` list names the jobs (read by the matcher)
ARQ_SETTINGS = ("WorkerSettings", "functions", "arq")
