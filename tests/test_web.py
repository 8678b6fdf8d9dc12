"""resume_audit.handlers.web: which functions serve requests or consume messages, and which modules are served."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from resume_audit.analysis.project import Project
from resume_audit.discovery.walk import discover
from resume_audit.engine.scan import load_module
from resume_audit.handlers import web


def project_of(tmp_path: Path, files: dict[str, str]) -> Project:
    write_tree(tmp_path, files)
    modules = [load_module(s.path, s.display) for s in discover([tmp_path], tmp_path, [])]
    return Project([m for m in modules if not hasattr(m, "kind")])


def handler_names(project: Project) -> dict[str, str]:
    return {f"{h.function.module.display_path}:{h.function.qualname}": h.kind for h in web.handlers(project)}


def test_http_frameworks(tmp_path: Path) -> None:
    project = project_of(
        tmp_path,
        {
            "svc/__init__.py": "",
            "svc/main.py": "from fastapi import FastAPI\napp = FastAPI()\n",
            "svc/routes.py": (
                "from fastapi import APIRouter\n"
                "from .main import app\n"
                "router = APIRouter()\n"
                "@app.post('/a')\ndef a(): ...\n"
                "@router.get('/b')\nasync def b(): ...\n"
                "def c(): ...\n"
                "app.add_api_route('/c', c, methods=['POST'])\n"
                "@app.on_event('startup')\ndef boot(): ...\n"
                "def helper(): ...\n"
            ),
            "flaskapp.py": (
                "from flask import Flask, Blueprint\nfrom flask.views import MethodView\n"
                "app = Flask(__name__)\nbp = Blueprint('x', __name__)\n"
                "@app.route('/r', methods=['POST'])\ndef r(): ...\n"
                "@bp.post('/s')\ndef s(): ...\n"
                "def t(): ...\napp.add_url_rule('/t', 't', t)\n"
                "class Item(MethodView):\n    def post(self): ...\n    def _helper(self): ...\n"
            ),
            "djapp/__init__.py": "",
            "djapp/views.py": (
                "from django.views import View\nfrom rest_framework.decorators import api_view\n"
                "def approve(request): ...\n"
                "@api_view(['POST'])\ndef drf(request): ...\n"
                "class Thing(View):\n    def post(self, request): ...\n"
                "def unrouted(request): ...\n"
            ),
            "djapp/urls.py": "from django.urls import path\nfrom . import views\nurlpatterns = [path('a/', views.approve)]\n",
            "aio.py": "from aiohttp import web\nroutes = web.RouteTableDef()\n@routes.post('/x')\nasync def x(request): ...\n",
        },
    )
    names = handler_names(project)
    for expected in (
        "svc/routes.py:a",
        "svc/routes.py:b",
        "svc/routes.py:c",
        "flaskapp.py:r",
        "flaskapp.py:s",
        "flaskapp.py:t",
        "flaskapp.py:Item.post",
        "djapp/views.py:approve",
        "djapp/views.py:drf",
        "djapp/views.py:Thing.post",
        "aio.py:x",
    ):
        assert expected in names, (expected, names)
    for not_expected in (
        "svc/routes.py:boot",
        "svc/routes.py:helper",
        "flaskapp.py:Item._helper",
        "djapp/views.py:unrouted",
    ):
        assert not_expected not in names
    assert names["svc/routes.py:a"] == "FastAPI route handler"


def test_queue_consumers(tmp_path: Path) -> None:
    project = project_of(
        tmp_path,
        {
            "tasks.py": (
                "from celery import Celery, shared_task\napp = Celery('x')\n"
                "@app.task(bind=True)\ndef t1(self): ...\n"
                "@shared_task\ndef t2(): ...\n"
            ),
            "kafka_loop.py": (
                "from kafka import KafkaConsumer\nconsumer = KafkaConsumer('topic')\n"
                "def loop():\n    for msg in consumer:\n        print(msg)\n"
                "def not_a_loop(items):\n    for x in items:\n        print(x)\n"
            ),
            "rabbit.py": (
                "import pika\n"
                "def on_message(ch, method, props, body): ...\n"
                "def main():\n    ch = pika.BlockingConnection().channel()\n"
                "    ch.basic_consume(queue='q', on_message_callback=on_message)\n"
            ),
            "sqs.py": "import boto3\nsqs = boto3.client('sqs')\ndef poll():\n    while True:\n        sqs.receive_message(QueueUrl='u')\n",
            "lam.py": "def handler(event, context):\n    return {}\n",
        },
    )
    names = handler_names(project)
    assert names["tasks.py:t1"] == "Celery task" and names["tasks.py:t2"] == "Celery task"
    assert names["kafka_loop.py:loop"] == "Kafka consumer loop"
    assert "kafka_loop.py:not_a_loop" not in names
    assert names["rabbit.py:on_message"] == "RabbitMQ consumer callback"
    assert names["sqs.py:poll"] == "SQS consumer loop"
    assert names["lam.py:handler"] == "AWS Lambda handler"


def test_served_modules_and_paths(tmp_path: Path) -> None:
    project = project_of(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/api.py": "from fastapi import FastAPI\nfrom .service import approve\napp = FastAPI()\n@app.post('/x')\ndef x():\n    return approve()\n",
            "app/service.py": "from .graph import graph\ndef approve():\n    return graph\n",
            "app/graph.py": "graph = None\n",
            "scripts/__init__.py": "",
            "scripts/demo.py": "from app.graph import graph\nprint(graph)\n",
        },
    )
    by_path = {m.display_path: m for m in project.modules}
    assert web.module_serves(by_path["app/api.py"], project)
    assert web.module_is_served(by_path["app/graph.py"], project)
    assert not web.module_is_served(by_path["scripts/demo.py"], project)
    approve = by_path["app/service.py"].find_function("approve")
    path = web.served_path(approve, project)
    assert path is not None and path.handler.function.name == "x" and len(path.calls) == 1
    assert web.served_path(by_path["app/api.py"].find_function("x"), project).calls == ()


def test_same_named_local_decorator_is_not_a_route(tmp_path: Path) -> None:
    project = project_of(
        tmp_path,
        {
            "cli.py": (
                "class Registry:\n    def post(self, path):\n        return lambda f: f\n"
                "registry = Registry()\n@registry.post('/x')\ndef x(): ...\n"
            ),
        },
    )
    assert handler_names(project) == {}
