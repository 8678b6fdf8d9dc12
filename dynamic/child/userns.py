"""Imported first by the fork server: enter a user namespace while the server is still single-threaded.

Every sweep child is forked from the server. A child cannot create a user
namespace itself once a preloaded framework has started a thread in it (LanceDB,
under CrewAI, does so after every fork), and without one an unprivileged child
cannot have a network namespace of its own (:mod:`.netns`). So the server enters
one here -- before any framework is imported -- with its ids mapped to
themselves; its children inherit it, with the capabilities that let each
create its own network namespace. Being in it also keeps every child away from
the sweep process's ``/proc/<pid>/environ``.

The parent asks for it through ``FORKSERVER_USERNS`` in the server's environment (not
when ``RESUME_AUDIT_NETNS=off``, which stands for a machine refusing user
namespaces); where the kernel refuses, the server goes on as it is and each
child falls back as :mod:`.confine` says.
"""

from __future__ import annotations

import os

from resume_audit.dynamic.child.netns import enter_user_namespace
from resume_audit.dynamic.confinement import FORKSERVER_USERNS as FLAG

#: why the server is not in a user namespace of its own ("" when it is, or was not asked to be)
REFUSED = ""
if os.environ.pop(FLAG, "") == "1":
    REFUSED = enter_user_namespace() or ""
