"""`storbench lab cluster up|down|status|exec|cut|restore`: hosts with known limits on this machine
(storbench.lab), to rehearse a cluster run before touching real machines."""

from __future__ import annotations

import argparse
import json

from storbench.lab import cluster, hosts
from storbench.lab.spec import DISK_MB_DEFAULT, build_spec
from storbench.results.store import ResultStore


def add_lab_parser(commands: argparse._SubParsersAction) -> None:
    lab = commands.add_parser("lab", help="a cluster of hosts with known limits on this machine (root; Linux)")
    kinds = lab.add_subparsers(dest="lab_kind", required=True)
    parser = kinds.add_parser("cluster", help="network-namespace hosts, each with its own throttled disk and link")
    actions = parser.add_subparsers(dest="lab_action", required=True)
    made = actions.add_parser("up", help="make N hosts; writes a nodes file (--nodes of `run`) with their limits")
    made.add_argument("--nodes", type=int, default=3, help="how many hosts (default 3)")
    made.add_argument("--disk-write-mbps", metavar="N[,N...]", help="each host's disk write limit, MB/s")
    made.add_argument("--disk-read-mbps", metavar="N[,N...]", help="each host's disk read limit, MB/s")
    made.add_argument("--link-mbit", metavar="N[,N...]", help="each host's link rate, Mbit/s (tc tbf)")
    made.add_argument("--link-delay-ms", metavar="N[,N...]", help="each host's link delay, ms (tc netem)")
    made.add_argument("--disk-mb", type=int, default=DISK_MB_DEFAULT, help="each host's disk size, MB")
    actions.add_parser("down", help="remove every namespace, link, loop device, mount and cgroup `up` made")
    actions.add_parser("status", help="the hosts, their addresses, disks and limits (JSON)")
    run_as = actions.add_parser("exec", help="run a command as one host (its network namespace and disk cgroup)")
    run_as.add_argument("host", help="node-1, node-2, ...")
    run_as.add_argument("argv", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    for name, text in (("cut", "take a host's link down (a failed port)"), ("restore", "bring it back up")):
        action = actions.add_parser(name, help=text)
        action.add_argument("host")


def cmd_lab(args: argparse.Namespace, store: ResultStore) -> int:
    home = store.home
    if args.lab_action == "up":
        spec = build_spec(
            args.nodes, args.disk_write_mbps, args.disk_read_mbps, args.link_mbit, args.link_delay_ms, args.disk_mb
        )
        nodes_file, made = cluster.up(home, spec)
        for host in made:
            limits = ", ".join(f"{k} {v:g}" for k, v in host.limits.items()) or "no limits"
            print(f"{host.name}: {host.address}  disk {host.device} at {host.mount}  {limits}")
        print(f"nodes file: {nodes_file}  (storbench run ... --nodes {nodes_file})")
        return 0
    if args.lab_action == "down":
        print("lab cluster removed" if cluster.down(home) else f"no lab cluster is up in {cluster.cluster_dir(home)}")
        return 0
    if args.lab_action == "status":
        print(json.dumps([vars(h) for h in cluster.hosts_of(home)], indent=1))
        return 0
    host = cluster.host_named(home, args.host)
    if args.lab_action == "exec":
        argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
        if not argv:
            raise cluster.LabError("lab cluster exec HOST -- COMMAND: no command given")
        return cluster.run_as(host, argv)
    (hosts.link_down if args.lab_action == "cut" else hosts.link_up)(host.namespace)
    return 0
