"""What confines a sweep child in the kernel, as data the parent decides and the child reports.

The parent turns its options and switches into a :class:`ConfinementPolicy`
(carried to every child in its ``RunSpec``); the child applies it
(:mod:`resume_audit.dynamic.child.confine`) and says which layers took
(:class:`ConfinementState`), in its result and in ``resume-audit doctor``.

The switches are environment variables the *parent* reads -- never the
child, whose environment is an allow-list. Each turns one layer off, which
is also how the tests stand in for a machine that refuses it:

- ``RESUME_AUDIT_NETNS=off``: no network namespace (as where unprivileged user
  namespaces are refused); the Landlock TCP rules and the seccomp filter then hold
  the network;
- ``RESUME_AUDIT_LANDLOCK=off``: no Landlock, for writes or TCP (as on a kernel
  before 5.13);
- ``RESUME_AUDIT_SECCOMP=off``: no seccomp filter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

#: in the fork server's environment: enter a user namespace first (:mod:`resume_audit.dynamic.child.userns`)
FORKSERVER_USERNS = "RESUME_AUDIT_FORKSERVER_USERNS"

SWITCHES = {"namespace": "RESUME_AUDIT_NETNS", "landlock": "RESUME_AUDIT_LANDLOCK", "seccomp": "RESUME_AUDIT_SECCOMP"}


class Layer(str, Enum):
    """One kernel mechanism the child can put itself under."""

    NAMESPACE = "network namespace"
    LANDLOCK_WRITES = "landlock writes"
    LANDLOCK_TCP = "landlock tcp"
    SECCOMP = "seccomp udp/raw"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class ConfinementPolicy:
    """Which layers a child tries (a switched-off layer is not tried) and whether it must have them."""

    allow_network: bool = False
    namespace: bool = True
    landlock: bool = True
    seccomp: bool = True
    #: ``--require-confinement``: refuse to run the program when the layers do not hold
    require: bool = False

    @classmethod
    def from_environ(
        cls, environ: Mapping[str, str], *, allow_network: bool = False, require: bool = False
    ) -> "ConfinementPolicy":
        def on(layer: str) -> bool:
            return environ.get(SWITCHES[layer], "").strip().lower() not in ("off", "0", "false", "no")

        return cls(allow_network, on("namespace"), on("landlock"), on("seccomp"), require)


@dataclass(frozen=True)
class LayerState:
    """One layer on this machine: whether it holds for the child, and why not (or what it holds)."""

    layer: Layer
    active: bool
    why: str = ""


@dataclass(frozen=True)
class ConfinementState:
    """The layers one child (or the doctor's probe) tried, in the order it tried them."""

    layers: tuple[LayerState, ...] = ()
    allow_network: bool = False

    def active(self, layer: Layer) -> bool:
        return any(s.layer is layer and s.active for s in self.layers)

    @property
    def network_confined(self) -> bool:
        """The kernel holds the network for every process of the cell (or the user lifted it)."""
        return (
            self.allow_network
            or self.active(Layer.NAMESPACE)
            or (self.active(Layer.LANDLOCK_TCP) and self.active(Layer.SECCOMP))
        )

    @property
    def writes_confined(self) -> bool:
        return self.active(Layer.LANDLOCK_WRITES)

    @property
    def sufficient(self) -> bool:
        return self.network_confined and self.writes_confined

    def shortfall(self) -> str:
        """Why the kernel does not confine the child here, in one sentence ("" when it does)."""
        missing = []
        if not self.network_confined:
            reasons = "; ".join(
                f"{s.layer}: {s.why}"
                for s in self.layers
                if s.layer in (Layer.NAMESPACE, Layer.LANDLOCK_TCP, Layer.SECCOMP) and not s.active
            )
            missing.append(f"the network is not confined in the kernel ({reasons})")
        if not self.writes_confined:
            why = next((s.why for s in self.layers if s.layer is Layer.LANDLOCK_WRITES), "not tried")
            missing.append(f"file writes are not confined in the kernel ({Layer.LANDLOCK_WRITES}: {why})")
        return "; ".join(missing)

    def summary(self) -> str:
        """One line for a sweep's header: the layers that hold."""
        held = [str(s.layer) for s in self.layers if s.active]
        net = (
            "network allowed (--allow-network)"
            if self.allow_network
            else (
                "network confined" if self.network_confined else "network NOT confined in the kernel (audit hook only)"
            )
        )
        return f"{', '.join(held) or 'no kernel layer'}; {net}"
