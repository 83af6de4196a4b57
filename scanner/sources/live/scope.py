"""What a live scan reads: its own module, so that a scan of files, which names no scope, never
imports the SDK clients, the transport and TLS that reading one needs."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class LiveScope:
    subscriptions: list[str] = field(default_factory=list)
    management_groups: list[str] = field(default_factory=list)
    all_subscriptions: bool = False

    @property
    def requested(self) -> bool:
        return bool(self.subscriptions or self.management_groups or self.all_subscriptions)
