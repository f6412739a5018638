"""``storbench lab cluster``: a cluster of hosts with known behaviour on one Linux machine, without a VM.

Each host is a network namespace with its own address on a bridge (spec.py: how many, which limits), a
loop-device file system for its disk whose writes its blkio cgroup throttles (disks.py), a link whose rate
``tc tbf`` fixes (hosts.py), and a node_exporter on its address; cluster.py makes them, writes a nodes file
(``storbench.telemetry.nodes``) that carries each node's limits, and removes exactly what its journal
(journal.py) recorded. A user rehearses a cluster run on it; the tests check per-node figures against the
limits they set.
"""
