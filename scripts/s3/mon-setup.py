#!/usr/bin/python3
"""Monitor set-up for scripts/s3/radosgw.sh in one process: register the OSD, create the rgw pools
and enable the rgw application on them.

One librados session instead of one `ceph` CLI process per command (~0.2-0.5 s each), and the
commands of each step are sent concurrently so the monitor folds them into few proposals.
Usage: mon-setup.py <ceph.conf> <osd-uuid> <pg-num> <pool>...
"""
import json
import sys
import threading

import rados


def main() -> int:
    conf, osd_uuid, pg_num, *pools = sys.argv[1:]
    cluster = rados.Rados(conffile=conf, conf={"client_mount_timeout": "20"})
    cluster.connect(timeout=20)
    try:
        steps = [
            [{"prefix": "osd new", "uuid": osd_uuid, "id": 0}]
            + [
                {"prefix": "osd pool create", "pool": p, "pg_num": int(pg_num), "pgp_num": int(pg_num)}
                for p in pools
            ],
            [{"prefix": "osd pool application enable", "pool": p, "app": "rgw"} for p in pools],
        ]
        for cmds in steps:
            results: list = [None] * len(cmds)

            def run(i: int, cmd: dict) -> None:
                try:
                    results[i] = cluster.mon_command(json.dumps(cmd), b"", timeout=20)
                except Exception as e:  # noqa: BLE001 - reported below with the command
                    results[i] = (-1, b"", str(e))

            threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(cmds)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            for cmd, (ret, _out, status) in zip(cmds, results):
                if ret != 0:
                    print(f"mon command {cmd['prefix']} {cmd.get('pool', '')} failed ({ret}): {status}",
                          file=sys.stderr)
                    return 1
    finally:
        cluster.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
