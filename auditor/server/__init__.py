"""``resume-audit server``: the scan's findings in the editor while the code is written, over the
Language Server Protocol (pygls, with lsprotocol's types).

One warm scan per workspace folder (:class:`~resume_audit.engine.live.LiveScan`: the engine,
configuration and cache of ``resume-audit scan``), re-analysing an edited module and the modules
whose findings rest on it. The parts: :mod:`~resume_audit.server.handlers` (the protocol),
:mod:`~resume_audit.server.session` (state, debounce, publishing), :mod:`~resume_audit.server.folders`
(one folder's scan), :mod:`~resume_audit.server.diagnostics` (findings as diagnostics),
:mod:`~resume_audit.server.actions` (quick fixes, suppression, hover), :mod:`~resume_audit.server.worker`
(the analysis thread) and :mod:`~resume_audit.server.main` (stdio, lifecycle). Editor set-up:
docs/editors.md.
"""
