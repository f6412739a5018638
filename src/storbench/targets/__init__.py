"""Where a run's data lives: one module per ``--target`` scheme behind one protocol (base.Target)."""

from storbench.targets.base import MARKER, Target, TargetOptions, parse_target, register, registry, target_class

__all__ = ["MARKER", "Target", "TargetOptions", "parse_target", "register", "registry", "target_class"]
