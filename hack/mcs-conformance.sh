#!/usr/bin/env bash
# Runs SIG-Multicluster's MCS conformance suite against a local fleet.
#
#   hack/mcs-conformance.sh MCS_API_DIR FLEET_DATA_DIR [MEMBER...] [-- GINKGO_ARGS...]
#
# MCS_API_DIR is a checkout of the kubernetes-sigs/mcs-api repository (its
# conformance/ directory is not served as a Go module, so it is run from
# there, never copied here). FLEET_DATA_DIR is the --data-dir of a running
# `shepherd up`; MEMBER names the members to test (default: member1
# member2), whose kubeconfigs are merged into one with a context each.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
mcs_api=$1
fleet=$2
shift 2
members=()
while [[ $# -gt 0 && $1 != -- ]]; do
  members+=("$1")
  shift
done
[[ ${1:-} == -- ]] && shift
[[ ${#members[@]} -gt 0 ]] || members=(member1 member2)

configs=()
for m in "${members[@]}"; do
  f=$fleet/members/$m.kubeconfig
  [[ -f $f ]] || { echo "no kubeconfig for member $m at $f: is shepherd up running with --data-dir $fleet?" >&2; exit 1; }
  configs+=("$f")
done
merged=$(mktemp)
trap 'rm -f "$merged"' EXIT
KUBECONFIG=$(IFS=:; echo "${configs[*]}") kubectl config view --flatten > "$merged"

contexts=$(IFS=,; echo "${members[*]}")
cd "$mcs_api/conformance"
go test -v -timeout 60m . -args \
  -kubeconfig "$merged" -contexts "$contexts" \
  -organization Shepherd -project shepherd -url https://github.com/shepherd-io/shepherd \
  "$@"
