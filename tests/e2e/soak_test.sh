#!/usr/bin/env bash
# The short chaos soak of the test command: tests/soak/soak.sh on an HA cluster (2 servers,
# 3 etcd members, 3 nodes) with one round of every fault type in a seeded random order (SOAK_SEED
# replays a run; the seed is printed), then its invariants and report. The 30-minute version is
# run by hand: tests/soak/soak.sh --duration 1800 (tests/soak/README.md).
exec bash "$(dirname "$0")/../soak/soak.sh" --rounds 1 ${SOAK_SEED:+--seed "$SOAK_SEED"}
