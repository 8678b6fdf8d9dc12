"""Everything resume-audit knows about pydantic-graph's resume plane, in one place.

Checked against the installed source of pydantic-graph 1.107.10 and the
wheel of pydantic-graph 2.68.0 (2026-12-02):

* 1.107.10: ``BaseNode`` is defined in ``pydantic_graph.basenode`` and
  re-exported by ``pydantic_graph``; ``pydantic_graph.nodes`` is the older
  module (a deprecated alias in 1.107.10, the definition in earlier 1.x).
  The ``BaseNode``-based runner ``Graph`` lives in ``pydantic_graph.graph``
  (``pydantic_graph.Graph`` still works with a deprecation warning) with
  ``run`` / ``run_sync`` / ``iter`` / ``iter_from_persistence`` /
  ``initialize``. Persistence: ``pydantic_graph.persistence.file.FileStatePersistence``
  and the in-memory ``SimpleStatePersistence`` / ``FullStatePersistence``
  (``pydantic_graph.persistence.in_mem``, also lazily from ``pydantic_graph``).
  ``Graph.iter_from_persistence`` raises
  ``GraphRuntimeError('Unable to restore snapshot from state persistence.')``
  when ``persistence.load_next()`` finds no snapshot in status ``created``
  (graph.py:290-291) -- which is what a crash inside a node leaves behind:
  ``record_run`` marked that snapshot ``running`` (then ``error``), and
  ``FileStatePersistence.load_next`` only takes ``created`` ones
  (persistence/file.py:96-104).
* 2.68.0: ``pydantic_graph.persistence``, ``pydantic_graph.graph`` and
  ``pydantic_graph.nodes`` are gone; ``pydantic_graph.Graph`` is the
  builder-based graph (``GraphBuilder(...).build()``). ``BaseNode``
  survives in ``pydantic_graph.basenode``.

Rules ask this module; they never spell pydantic-graph module paths themselves.
"""

from __future__ import annotations

from resume_audit.analysis.queries import ProjectQueries
from resume_audit.facts.model import ClassInfo
from resume_audit.frameworks.classes import extends

PACKAGES = ("pydantic_graph",)

#: 1.x file persistence: resumable only from a snapshot parked *between* nodes.
FILE_STATE_PERSISTENCE = frozenset({"pydantic_graph.persistence.file.FileStatePersistence"})
#: In-memory persistence: nothing survives the process (not a resume-after-restart mechanism).
IN_MEMORY_PERSISTENCE = frozenset(
    {
        "pydantic_graph.SimpleStatePersistence",
        "pydantic_graph.FullStatePersistence",
        "pydantic_graph.persistence.in_mem.SimpleStatePersistence",
        "pydantic_graph.persistence.in_mem.FullStatePersistence",
    }
)
BASE_STATE_PERSISTENCE = frozenset({"pydantic_graph.persistence.BaseStatePersistence"})

#: Node classes: their ``run`` method is the node body.
BASE_NODE = frozenset({"pydantic_graph.BaseNode", "pydantic_graph.basenode.BaseNode", "pydantic_graph.nodes.BaseNode"})
#: The 1.x BaseNode runner (in 2.x ``pydantic_graph.Graph`` is the builder-based graph).
GRAPH = frozenset({"pydantic_graph.Graph", "pydantic_graph.graph.Graph"})
GRAPH_RUNTIME_ERROR = frozenset({"pydantic_graph.GraphRuntimeError", "pydantic_graph.exceptions.GraphRuntimeError"})

#: ``async with graph.iter_from_persistence(persistence) as run`` resumes a run.
ITER_FROM_PERSISTENCE = "iter_from_persistence"
#: ``persistence.load_next()``: what the resume path reads.
LOAD_NEXT = "load_next"
#: Methods that start a run from a given start node (a fresh run).
START_METHODS = frozenset({"run", "run_sync", "iter", "initialize"})
#: Writing a ``created`` snapshot by hand re-seeds a run the framework can restore.
RESEED_METHODS = frozenset({"snapshot_node", "snapshot_node_if_new"})


def is_node_class(cls: ClassInfo, project: ProjectQueries) -> bool:
    return extends(cls, BASE_NODE, project)


def is_file_persistence_subclass(cls: ClassInfo, project: ProjectQueries) -> bool:
    return extends(cls, FILE_STATE_PERSISTENCE, project)
