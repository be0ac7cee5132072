#!/usr/bin/env bash
# What the test suite needs besides npm packages, installed only when missing:
#  - Ceph radosgw (Debian packages): the real S3 server the store and pipeline tests run against
#    (skipped when S3_ENDPOINT points at an S3 server of your own);
#  - pyarrow (pip): one of the independent Parquet readers the output is checked with;
#  - fastavro (pip): the independent reader of Iceberg manifests and manifest lists (test/iceberg/);
#  - prometheus-pushgateway and tini (Debian packages): the run-metrics push and the container's
#    init (signal forwarding) are tested against the real programs (test/ops).
# Runs as `npm test`'s pretest step; safe to run again (it only checks when all is present).
set -euo pipefail

need_root() {
  if [[ $(id -u) -ne 0 ]]; then
    echo "install-test-deps: $1 is missing and installing it needs root: $2" >&2
    exit 1
  fi
}

# What is missing is gathered first, then installed in one apt-get update and install and one pip
# call: each apt-get update fetches and reads every package list again (~10 s here).
debs=()
why=()
if [[ -z "${S3_ENDPOINT:-}" ]] && ! command -v radosgw >/dev/null 2>&1; then
  debs+=(radosgw ceph-mon ceph-osd ceph-common)
  why+=("Ceph radosgw (or set S3_ENDPOINT, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY)")
fi
if ! command -v prometheus-pushgateway >/dev/null 2>&1 || ! command -v tini >/dev/null 2>&1; then
  debs+=(prometheus-pushgateway tini)
  why+=("prometheus-pushgateway and tini")
fi
if ((${#debs[@]})); then
  need_root "${why[*]}" "sudo apt-get install -y --no-install-recommends ${debs[*]}"
  echo "install-test-deps: installing ${why[*]} (Debian packages: ${debs[*]}; ~40 s)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${debs[@]}" >/dev/null
fi

wheels=()
python3 -c 'import pyarrow' >/dev/null 2>&1 || wheels+=(pyarrow)
python3 -c 'import fastavro' >/dev/null 2>&1 || wheels+=(fastavro)
if ((${#wheels[@]})); then
  echo "install-test-deps: installing ${wheels[*]} (pip)" >&2
  python3 -m pip install -q "${wheels[@]}" || { echo "install-test-deps: pip install ${wheels[*]} failed" >&2; exit 1; }
fi
