"""Where a run's data lives: one protocol (base.Target) and one module per ``--target`` scheme.

A new scheme is one new module here (plus its tests): a ``Target`` subclass decorated with
``@register`` that sets ``scheme``, ``kind``, ``usage`` and ``wanted`` and implements
``parse`` and what its storage needs (precheck, claim_root, release_root, size_bytes,
evict, delete, local_path...). The registry imports every module of this package, so no
list elsewhere names it; workloads that can use it add the scheme to their ``schemes``.
"""

from storbench.targets.base import MARKER, Target, TargetOptions, parse_target, register, registry, target_class

__all__ = ["MARKER", "Target", "TargetOptions", "parse_target", "register", "registry", "target_class"]
