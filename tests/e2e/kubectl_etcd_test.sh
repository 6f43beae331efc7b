#!/usr/bin/env bash
# The same kubectl session against a server on a real etcd.
BACKEND=etcd
source "$(dirname "$0")/kubectl_scenario.sh"
