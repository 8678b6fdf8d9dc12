"""Which confinement layers a sweep child gets on this machine, found by trying them.

A throwaway interpreter runs :mod:`resume_audit.dynamic.child.confine` with the
sweep's policy and reports the layers that took: the same code a child runs,
so ``resume-audit doctor`` and ``--require-confinement`` say what a child would
really get, and why a layer did not take (a kernel without Landlock, user
namespaces refused, a switch set).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from resume_audit.codec import decode_fields, encode
from resume_audit.dynamic.confinement import SWITCHES, ConfinementPolicy, ConfinementState, Layer, LayerState
from resume_audit.dynamic.environment import base_variables


def probe(policy: ConfinementPolicy) -> ConfinementState:
    """The layers a child under ``policy`` gets here (a probe that cannot run: none, with why)."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "resume_audit.dynamic.child.confine", json.dumps(encode(policy))],
            capture_output=True,
            text=True,
            timeout=60,
            env=base_variables(os.environ),
        )
        if done.returncode == 0 and done.stdout.strip():
            return decode_fields(ConfinementState, json.loads(done.stdout.strip().splitlines()[-1]))
        why = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        why = str(exc)
    failed = f"the confinement probe failed: {why}"
    return ConfinementState(tuple(LayerState(layer, False, failed) for layer in Layer), policy.allow_network)


def render(state: ConfinementState) -> str:
    """The doctor's report: one line per layer, then what it adds up to."""
    lines = ["Confinement of a sweep child on this machine (tried in a throwaway process):"]
    allow_list = "environment allow-list"
    width = max(len(allow_list), *(len(str(layer)) for layer in Layer))
    for s in state.layers:
        lines.append(f"  {str(s.layer):<{width}}  {'active  ' if s.active else 'inactive'}  {s.why}")
    tried = {s.layer for s in state.layers}
    for layer in Layer:
        if layer not in tried:
            lines.append(f"  {str(layer):<{width}}  standby   only tried where the network namespace is refused")
    lines.append(
        f"  {allow_list:<{width}}  active    PATH, locale, TZ, TERM, Python/virtualenv, fake LLM keys, --pass-env names"
    )
    lines.append("")
    lines.append(
        f"network: {'confined in the kernel' if state.network_confined else 'NOT confined in the kernel'}; "
        f"file writes: {'confined in the kernel' if state.writes_confined else 'NOT confined in the kernel'}"
    )
    if not state.sufficient:
        lines.append(f"--require-confinement would refuse: {state.shortfall()}")
    switched = [f"{name}={os.environ[name]}" for name in SWITCHES.values() if name in os.environ]
    if switched:
        lines.append(f"switches set: {', '.join(switched)}")
    return "\n".join(lines) + "\n"
