"""The value-flow engine answers "what can this expression hold" across the project.

Each test is a small project written the way real agent code hands objects around (the classes the
blind corpus showed the rules missing): a registry dict, a constructor argument kept on ``self``, a
checkpointer assigned as an attribute at start-up, ``**kwargs`` configs, lambdas and partials, a
context manager that yields the graph, a module global set by a start-up hook, a constant passed
through a method parameter. The engine is asked about the expression a rule would ask about.
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst
from conftest import write_tree

from resume_audit.analysis.flow.engine import flow_of, type_name
from resume_audit.analysis.flow.values import Bound, Class, Constant, Function, Instance, Made, Value
from resume_audit.analysis.project import Project
from resume_audit.discovery.modulenames import SourceFile, module_name_for
from resume_audit.discovery.walk import discover
from resume_audit.engine.scan import load_module


def _project(root: Path, files: dict[str, str]) -> Project:
    write_tree(root, files)
    entries = [
        SourceFile(s.resolved, s.display, *module_name_for(s.resolved, resolved=True))
        for s in discover([root], root, [])
    ]
    texts = {str(e.path): e.path.read_text() for e in entries}
    return Project(
        files=entries,
        loader=lambda e: load_module(e.path, e.display),
        mentions=lambda word: [path for path, text in texts.items() if word in text],
    )


def _module(project: Project, display: str):
    for name in project.module_names():
        for module in project.modules_named(name):
            if module.display_path == display:
                return module
    raise AssertionError(display)


def _call(module, text: str):
    """The call in ``module`` whose code is ``text``, with its CallInfo."""
    for info in module.all_calls:
        if module.code(info.node) == text:
            return info
    raise AssertionError(f"no call {text!r}: {[module.code(c.node) for c in module.all_calls]}")


def _types(values: frozenset[Value]) -> set[str]:
    return {type_name(v) for v in values if isinstance(v, Made)}


def _receiver_values(project: Project, module, text: str) -> frozenset[Value]:
    info = _call(module, text)
    func = info.node.func
    assert isinstance(func, cst.Attribute)
    return flow_of(project).values(func.value, info.function, module)


GRAPH = """
from langgraph.graph import StateGraph
from langgraph.checkpoint.sqlite import SqliteSaver


def build(checkpointer=None):
    builder = StateGraph(dict)
    builder.add_node("charge", charge)
    return builder.compile(checkpointer=checkpointer)


def charge(state):
    return state
"""


def test_a_graph_in_a_registry_dict_looked_up_by_id(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        {
            "app/graph.py": GRAPH,
            "app/registry.py": (
                "from app.graph import build\n"
                "AGENTS = {'support': build(), 'billing': build()}\n\n"
                "def get_agent(agent_id):\n"
                "    return AGENTS[agent_id]\n"
            ),
            "app/api.py": (
                "from app.registry import get_agent\n\n"
                "async def resume(agent_id, cfg):\n"
                "    graph = get_agent(agent_id)\n"
                "    return await graph.ainvoke(None, cfg)\n"
            ),
        },
    )
    api = _module(project, "app/api.py")
    assert _types(_receiver_values(project, api, "graph.ainvoke(None, cfg)")) == {"langgraph.graph.StateGraph.compile"}


def test_a_graph_passed_to_a_constructor_and_kept_on_self(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        {
            "app/graph.py": GRAPH,
            "app/service.py": (
                "class Runner:\n"
                "    def __init__(self, graph):\n"
                "        self.graph = graph\n\n"
                "    def resume(self, cfg):\n"
                "        return self.graph.invoke(None, cfg)\n"
            ),
            "app/main.py": ("from app.graph import build\nfrom app.service import Runner\nrunner = Runner(build())\n"),
        },
    )
    service = _module(project, "app/service.py")
    assert _types(_receiver_values(project, service, "self.graph.invoke(None, cfg)")) == {
        "langgraph.graph.StateGraph.compile"
    }


def test_a_checkpointer_assigned_as_an_attribute_at_start_up(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        {
            "app/graph.py": GRAPH,
            "app/main.py": (
                "from langgraph.checkpoint.memory import InMemorySaver\n"
                "from app.graph import build\n"
                "agent = build()\n\n"
                "def startup():\n"
                "    agent.checkpointer = InMemorySaver()\n"
            ),
        },
    )
    main = _module(project, "app/main.py")
    flow = flow_of(project)
    (graph,) = [v for v in flow._global("agent", main) if isinstance(v, Made)]
    assert _types(flow.stored(graph, "checkpointer")) == {"langgraph.checkpoint.memory.InMemorySaver"}


def test_a_resume_built_in_a_helper_and_sent_through_kwargs(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        {
            "app/graph.py": GRAPH,
            "app/api.py": (
                "from langgraph.types import Command\n"
                "from app.graph import build\n"
                "graph = build()\n\n"
                "def _payload(answer, thread):\n"
                "    return {'input': Command(resume=answer), 'config': {'configurable': {'thread_id': thread}}}\n\n"
                "async def approve(answer, thread):\n"
                "    kwargs = _payload(answer, thread)\n"
                "    async for chunk in graph.astream(**kwargs):\n"
                "        yield chunk\n"
            ),
        },
    )
    api = _module(project, "app/api.py")
    info = _call(api, "graph.astream(**kwargs)")
    flow = flow_of(project)
    (spread,) = flow.values(info.node.args[0].value, info.function, api)
    assert _types(flow.items(spread, Constant("input"))) == {"langgraph.types.Command"}


def test_a_resume_call_inside_a_lambda_handed_to_a_wrapper(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        {
            "app/graph.py": GRAPH,
            "app/api.py": (
                "from app.graph import build\n"
                "graph = build()\n\n"
                "async def run_guarded(step):\n"
                "    return await step()\n\n"
                "async def resume(cfg):\n"
                "    return await run_guarded(lambda: graph.ainvoke(None, cfg))\n"
            ),
        },
    )
    api = _module(project, "app/api.py")
    flow = flow_of(project)
    run_guarded = api.find_function("run_guarded")
    step = flow.parameter(run_guarded, "step")
    assert len(step) == 1
    (lam,) = step
    assert _types(flow.values(lam.node.body, lam.scope, lam.module)) == {"langgraph.graph.StateGraph.compile.ainvoke"}


def test_a_graph_yielded_by_an_async_context_manager(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        {
            "app/graph.py": GRAPH,
            "app/bot.py": (
                "from contextlib import asynccontextmanager\n"
                "from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver\n"
                "from app.graph import build\n\n"
                "@asynccontextmanager\n"
                "async def get_agent_app():\n"
                "    async with AsyncSqliteSaver.from_conn_string('db.sqlite') as saver:\n"
                "        yield build(saver)\n\n"
                "async def on_approve(message):\n"
                "    async with get_agent_app() as app:\n"
                "        await app.aupdate_state({'configurable': {'thread_id': str(message.chat.id)}}, {'ok': True})\n"
            ),
        },
    )
    bot = _module(project, "app/bot.py")
    values = _receiver_values(
        project, bot, "app.aupdate_state({'configurable': {'thread_id': str(message.chat.id)}}, {'ok': True})"
    )
    assert _types(values) == {"langgraph.graph.StateGraph.compile"}
    build = _module(project, "app/graph.py").find_function("build")
    saver = flow_of(project).parameter(build, "checkpointer")
    assert {"langgraph.checkpoint.sqlite.aio.AsyncSqliteSaver.from_conn_string"} <= _types(saver)
    assert Constant(None) in saver


def test_a_module_global_set_by_a_startup_hook_and_read_through_an_awaited_getter(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        {
            "app/graph.py": GRAPH,
            "app/state.py": (
                "from app.graph import build\n"
                "_graph = None\n\n"
                "def init():\n"
                "    global _graph\n"
                "    _graph = build()\n\n"
                "async def get_graph():\n"
                "    return _graph\n"
            ),
            "app/api.py": (
                "from app.state import get_graph\n\n"
                "async def resume(cfg):\n"
                "    graph = await get_graph()\n"
                "    return graph.invoke(None, cfg)\n"
            ),
        },
    )
    api = _module(project, "app/api.py")
    values = _receiver_values(project, api, "graph.invoke(None, cfg)")
    assert _types(values) == {"langgraph.graph.StateGraph.compile"}
    assert Constant(None) in values


def test_a_constant_thread_id_passed_through_a_method_parameter(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        {
            "app/agent.py": (
                "class Agent:\n"
                "    def answer(self, text, chat_id):\n"
                "        config = {'configurable': {'thread_id': chat_id}}\n"
                "        return self.graph.invoke({'text': text}, config)\n\n"
                "agent = Agent()\n"
            ),
            "app/main.py": (
                "from app.agent import agent\n\n"
                "def webhook(message):\n"
                "    return agent.answer(message, 'test_chat_id')\n"
            ),
        },
    )
    agent = _module(project, "app/agent.py")
    answer = agent.find_function("Agent.answer")
    assert flow_of(project).parameter(answer, "chat_id") == frozenset({Constant("test_chat_id")})


def test_a_saver_default_and_a_partial_bound_node(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        {
            "app/graph.py": (
                "import functools\n"
                "from langgraph.checkpoint.memory import InMemorySaver\n"
                "from langgraph.graph import StateGraph\n\n"
                "def apply(state, provider):\n"
                "    return provider.save(state)\n\n"
                "def build_graph(provider, checkpointer=InMemorySaver()):\n"
                "    builder = StateGraph(dict)\n"
                "    builder.add_node('apply', functools.partial(apply, provider=provider))\n"
                "    return builder.compile(checkpointer=checkpointer)\n"
            ),
        },
    )
    graph = _module(project, "app/graph.py")
    flow = flow_of(project)
    build = graph.find_function("build_graph")
    assert _types(flow.parameter(build, "checkpointer")) == {"langgraph.checkpoint.memory.InMemorySaver"}
    info = _call(graph, "builder.add_node('apply', functools.partial(apply, provider=provider))")
    (partial,) = flow.values(info.node.args[1].value, info.function, graph)
    assert isinstance(partial.target, Function) and partial.target.fn.name == "apply"


def test_methods_through_a_base_class_and_a_field_set_in_a_subclass(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        {
            "app/base.py": (
                "class Service:\n    def send(self, body):\n        return self.client.post('/send', json=body)\n"
            ),
            "app/mail.py": (
                "import httpx\n"
                "from app.base import Service\n\n"
                "class Mailer(Service):\n"
                "    def __init__(self):\n"
                "        self.client = httpx.Client()\n"
            ),
        },
    )
    base = _module(project, "app/base.py")
    info = _call(base, "self.client.post('/send', json=body)")
    callee_types = {type_name(v) for v in flow_of(project).values(info.node.func, info.function, base)}
    assert "httpx.Client.post" in callee_types


def test_callees_of_a_bound_method_through_an_instance_in_a_registry_of_classes(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        {
            "app/adapters.py": (
                "class Slack:\n"
                "    def publish(self, text):\n"
                "        return text\n\n"
                "class Email:\n"
                "    def publish(self, text):\n"
                "        return text\n\n"
                "ADAPTERS = {'slack': Slack, 'email': Email}\n\n"
                "def notify(kind, text):\n"
                "    adapter = ADAPTERS[kind]()\n"
                "    return adapter.publish(text)\n"
            ),
        },
    )
    adapters = _module(project, "app/adapters.py")
    info = _call(adapters, "adapter.publish(text)")
    names = sorted(fn.qualname for fn in flow_of(project).callees(info))
    assert names == ["Email.publish", "Slack.publish"]
    values = flow_of(project).values(info.node.func, info.function, adapters)
    assert all(isinstance(v, Bound) and isinstance(v.owner, Instance) for v in values)


def test_callers_and_arguments_across_modules(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        {
            "app/runs.py": ("def run_graph(graph, payload, cfg):\n    return graph.invoke(payload, cfg)\n"),
            "app/api.py": (
                "from app.runs import run_graph\n\n"
                "def approve(graph, cfg):\n"
                "    graph.update_state(cfg, {'ok': True})\n"
                "    return run_graph(graph, None, cfg)\n\n"
                "def start(graph, cfg):\n"
                "    return run_graph(graph, {'q': 1}, cfg=cfg)\n"
            ),
        },
    )
    runs = _module(project, "app/runs.py")
    run_graph = runs.find_function("run_graph")
    flow = flow_of(project)
    assert {c.function.name for c in flow.callers(run_graph)} == {"approve", "start"}
    payload = flow.parameter(run_graph, "payload")
    assert Constant(None) in payload and any(getattr(v, "kind", "") == "dict" for v in payload)


def test_a_class_value_and_an_unknown_parameter_stay_apart(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        {
            "app/a.py": ("class Agent:\n    pass\n\ndef make(kind):\n    return kind\n"),
        },
    )
    module = _module(project, "app/a.py")
    flow = flow_of(project)
    assert flow.parameter(module.find_function("make"), "kind") == frozenset()
    assert flow._global("Agent", module) == frozenset({Class.of(module.find_class("Agent"))})


def test_a_cycle_of_helpers_handing_a_value_around_is_answered_in_polynomial_work(tmp_path: Path) -> None:
    # real code: handlers, helpers and node functions that call each other and pass the graph/config
    # along (a web app's routes calling shared helpers that call back into the router). Every function
    # here calls every other one with its parameter: one big cycle of parameters and callers.
    n = 9
    body = "".join(
        f"def step{i}(value):\n" + "".join(f"    step{j}(value)\n" for j in range(n) if j != i) + "    return value\n\n"
        for i in range(n)
    )
    project = _project(tmp_path, {"app/steps.py": body + "step0('thread-1')\n"})
    module = _module(project, "app/steps.py")
    flow = flow_of(project)
    computed = 0
    values = flow._values

    def counting(*args: object) -> frozenset[Value]:
        nonlocal computed
        computed += 1
        return values(*args)  # type: ignore[arg-type]

    flow._values = counting  # type: ignore[method-assign]
    for i in range(n):
        assert Constant("thread-1") in flow.parameter(module.find_function(f"step{i}"), "value")
    # each expression of the module is worked out a bounded number of times, not once per path
    assert computed < 40 * n * n, computed


def test_a_context_manager_entered_by_hand(tmp_path: Path) -> None:
    # a FastAPI lifespan that keeps the context manager to exit it at shutdown
    project = _project(
        tmp_path,
        {
            "app/main.py": (
                "from langgraph.checkpoint.redis.aio import AsyncRedisSaver\n\n"
                "async def lifespan(app):\n"
                "    ctx = AsyncRedisSaver.from_conn_string('redis://cache')\n"
                "    saver = await ctx.__aenter__()\n"
                "    app.state.ctx = ctx\n"
                "    return saver\n"
            ),
        },
    )
    module = _module(project, "app/main.py")
    lifespan = module.find_function("lifespan")
    assert _types(flow_of(project).returns(lifespan)) == {
        "langgraph.checkpoint.redis.aio.AsyncRedisSaver.from_conn_string"
    }


def test_the_kind_of_a_graphs_checkpointer(tmp_path: Path) -> None:
    from resume_audit.frameworks.langgraph import names as langgraph

    project = _project(
        tmp_path,
        {
            "app/graphs.py": (
                "from langgraph.checkpoint.memory import InMemorySaver\n"
                "from langgraph.checkpoint.mysql.pymysql import PyMySQLSaver\n"
                "from langgraph.checkpoint.redis.aio import AsyncRedisSaver\n"
                "from langgraph.graph import StateGraph\n\n"
                "def build(saver):\n"
                "    return StateGraph(dict).compile(checkpointer=saver)\n\n"
                "def in_memory():\n"
                "    return build(InMemorySaver())\n\n"
                "def mysql(conn):\n"
                "    return PyMySQLSaver(conn)\n\n"
                "async def redis_or_memory():\n"
                "    try:\n"
                "        ctx = AsyncRedisSaver.from_conn_string('redis://cache')\n"
                "        saver = await ctx.__aenter__()\n"
                "    except Exception:\n"
                "        saver = InMemorySaver()\n"
                "    return StateGraph(dict).compile(checkpointer=saver)\n"
            ),
        },
    )
    module = _module(project, "app/graphs.py")
    kinds = []
    for info in module.all_calls:
        graph = langgraph.compiled_graph(info.node, info.function, module, project)
        if graph is not None:
            kinds.append((info.function.name, langgraph.saver_kind(graph, project)))
    # build's saver is only ever an InMemorySaver; the fallback graph may get Redis: durable wins
    assert sorted(kinds) == [("build", "memory"), ("redis_or_memory", "durable")]
    mysql = _call(module, "PyMySQLSaver(conn)")
    assert langgraph.checkpointer_kind(mysql.node, mysql.function, module, project) == "durable"
