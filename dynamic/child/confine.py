"""Put this process, and every process it will start, under the kernel's confinement layers.

The order matters: the network namespace first (it forks the loopback bridge,
which must stay outside the namespace and outside Landlock), then Landlock for
writes; only when the namespace did not take, Landlock's TCP rules and the
seccomp filter for the rest of the network. See docs/sandbox.md for what each
layer holds and what it does not.

Run as ``python -m resume_audit.dynamic.child.confine '<policy json>'`` it is
the probe ``resume-audit doctor`` and ``--require-confinement`` use: a
throwaway process applies the policy (nothing writable) and prints the
:class:`~resume_audit.dynamic.confinement.ConfinementState` it got -- what a
sweep child on this machine would get, found by doing it, not by guessing.
"""

from __future__ import annotations

import json
import sys

from resume_audit.codec import decode, encode
from resume_audit.dynamic.child import capabilities, landlock, netns, seccomp
from resume_audit.dynamic.confinement import ConfinementPolicy, ConfinementState, Layer, LayerState

_SWITCHED_OFF = "switched off ({})"


class ConfinementRefused(RuntimeError):
    """``--require-confinement`` and a layer did not take: the program is not run."""


def apply(policy: ConfinementPolicy, writable_dirs: list[str], writable_files: list[str]) -> ConfinementState:
    """Apply ``policy``; the layers that took. Raises :class:`ConfinementRefused` when required and short."""
    layers: list[LayerState] = []
    network = not policy.allow_network
    namespace_held = False
    if network:
        if not policy.namespace:
            layers.append(LayerState(Layer.NAMESPACE, False, _SWITCHED_OFF.format("RESUME_AUDIT_NETNS=off")))
        else:
            why = netns.enter()
            namespace_held = why is None
            layers.append(
                LayerState(
                    Layer.NAMESPACE,
                    namespace_held,
                    why or "loopback only; the machine's loopback TCP servers bridged in",
                )
            )
    if not policy.landlock:
        layers.append(LayerState(Layer.LANDLOCK_WRITES, False, _SWITCHED_OFF.format("RESUME_AUDIT_LANDLOCK=off")))
    else:
        abi = landlock.abi_version()
        held = landlock.confine_writes(writable_dirs, writable_files)
        layers.append(
            LayerState(
                Layer.LANDLOCK_WRITES,
                held,
                f"ABI {abi}"
                if held
                else (
                    "no Landlock in this kernel (Linux 5.13+ with landlock in the LSM list)"
                    if abi == 0
                    else "the ruleset was refused"
                ),
            )
        )
    if network and not namespace_held:
        if not policy.landlock:
            layers.append(LayerState(Layer.LANDLOCK_TCP, False, _SWITCHED_OFF.format("RESUME_AUDIT_LANDLOCK=off")))
        else:
            ports = sorted({p.port for p in netns.listening_loopback_ports()})
            why = landlock.confine_tcp_connect(ports)
            layers.append(
                LayerState(
                    Layer.LANDLOCK_TCP, why is None, why or f"connect only to {len(ports)} loopback server port(s)"
                )
            )
        if not policy.seccomp:
            layers.append(LayerState(Layer.SECCOMP, False, _SWITCHED_OFF.format("RESUME_AUDIT_SECCOMP=off")))
        else:
            why = seccomp.deny_datagrams()
            layers.append(LayerState(Layer.SECCOMP, why is None, why or "no UDP, raw or packet sockets"))
    # last: no capability is left to the program -- root outside a user namespace could read the sweep's
    # /proc/<pid>/environ, and inside the fork server's one it could ptrace the bridge, which is outside the network
    # namespace (the bridge is not dumpable: tracing it needs CAP_SYS_PTRACE)
    why = capabilities.drop_all()
    if why is not None:
        layers.append(LayerState(Layer.LANDLOCK_WRITES, False, f"root's capabilities could not be dropped: {why}"))
    state = ConfinementState(tuple(layers), policy.allow_network)
    if policy.require and not state.sufficient:
        raise ConfinementRefused(f"--require-confinement: {state.shortfall()}")
    return state


def _probe(policy_json: str) -> int:
    policy = decode(ConfinementPolicy, json.loads(policy_json))
    # nothing is writable for the probe: it only needs to know whether each layer takes
    state = apply(ConfinementPolicy(policy.allow_network, policy.namespace, policy.landlock, policy.seccomp), [], [])
    netns.stop_bridge()
    sys.stdout.write(json.dumps(encode(state)) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(_probe(sys.argv[1]))
