#!/usr/bin/env bash
# The deployment files of `make lint`: the Kubernetes set against the API of the oldest
# Kubernetes release still supported upstream (strict: an unknown field fails), the compose files
# against the compose specification (each alone; `make image-test` runs them with
# podman-compose), the systemd unit with systemd-analyze, and the Prometheus alerts with promtool
# (their syntax, and each alert fired and cleared by its unit tests).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/support/venv.sh .ci/deploy-requirements.txt
bash .ci/install-deps.sh image
bash .ci/install-deps.sh test

KUBERNETES_VERSION=1.31.0
manifests=()
for file in deploy/kubernetes/*.yaml; do
    # kustomization.yaml is kustomize's, not an API object; kustomize checks it when applied.
    [[ $(basename "$file") == kustomization.yaml ]] || manifests+=("$file")
done
.venv/bin/kubernetes-validate --strict --quiet -k "$KUBERNETES_VERSION" "${manifests[@]}"
# Every manifest the kustomization lists exists, and every manifest is listed.
for file in "${manifests[@]}"; do
    grep -qx "  - $(basename "$file")" deploy/kubernetes/kustomization.yaml ||
        { echo "$file is not listed in deploy/kubernetes/kustomization.yaml" >&2; exit 1; }
done
echo "ok: ${#manifests[@]} Kubernetes manifests (API $KUBERNETES_VERSION, strict)"
# Each kustomization as `kubectl apply -k` sends it: deploy/kubernetes-sqlite is the set above
# patched (one replica, volumes, the backup sidecar), whose Deployment only the rendering shows
# whole. Every file beside its kustomization.yaml is listed in it.
command -v kubectl >/dev/null ||
    { echo "kubectl is needed to render the kustomizations (kubectl kustomize)" >&2; exit 1; }
rendered=$(mktemp -d)
trap 'rm -rf "$rendered"' EXIT
for kustomization in deploy/kubernetes deploy/kubernetes-sqlite; do
    for file in "$kustomization"/*.yaml; do
        [[ $(basename "$file") == kustomization.yaml ]] ||
            grep -qE "^  - (path: )?$(basename "$file")\$" "$kustomization/kustomization.yaml" ||
            { echo "$file is not listed in $kustomization/kustomization.yaml" >&2; exit 1; }
    done
    kubectl kustomize "$kustomization" >"$rendered/$(basename "$kustomization").yaml"
done
# The restore Pod an operator applies by hand is checked as it stands.
.venv/bin/kubernetes-validate --strict --quiet -k "$KUBERNETES_VERSION" "$rendered"/*.yaml \
    deploy/kubernetes-sqlite/restore/*.yaml
echo "ok: deploy/kubernetes and deploy/kubernetes-sqlite as kustomize renders them, and its restore Pod"

.venv/bin/check-jsonschema --builtin-schema vendor.compose-spec deploy/compose/*.yaml

# verify insists that the binary exists; a stand-in at its path is checked instead, since the
# unit's directives, not the binary, are what this checks.
unit_dir=$(mktemp -d)
trap 'rm -rf "$rendered" "$unit_dir"' EXIT
units=()
for unit in deploy/systemd/*.service deploy/systemd/*.timer; do
    sed "s|/usr/local/bin/petstore|/usr/bin/true|g" "$unit" >"$unit_dir/$(basename "$unit")"
    units+=("$unit_dir/$(basename "$unit")")
done
# It warns about a bad value and still exits 0: any word from it fails the check. The units are
# verified together, so that the timer finds its service.
complaints=$(SYSTEMD_LOG_LEVEL=warning systemd-analyze verify "${units[@]}" 2>&1) ||
    { echo "$complaints" >&2; exit 1; }
if [[ -n $complaints ]]; then
    echo "deploy/systemd: $complaints" >&2
    exit 1
fi
echo "ok: deploy/systemd (${#units[@]} units)"

promtool check rules deploy/prometheus/alerts.yml
promtool test rules deploy/prometheus/alerts.test.yml
echo "ok: deploy/prometheus/alerts.yml (checked, and fired and cleared by alerts.test.yml)"
