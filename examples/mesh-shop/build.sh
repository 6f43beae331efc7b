#!/usr/bin/env bash
# Builds the shop's images from this directory and pushes them to the cluster registry
# (`minik8s image build`: buildah, FROM the cluster's minik8s/python). REGISTRY defaults to a
# `minik8s cluster up` cluster's registry.
set -euo pipefail
cd "$(dirname "$0")"
MINIK8S=${MINIK8S:-minik8s}
REGISTRY=${REGISTRY:-172.29.0.1:5000}
"$MINIK8S" image build -t shop/app:1.0 -f Dockerfile . --registry "$REGISTRY"
for v in v1 v2 v3; do
  "$MINIK8S" image build -t "shop/reviews:$v" -f "reviews-$v.Dockerfile" . --registry "$REGISTRY"
done
