#!/usr/bin/env bash
# The npm package as an SDK team gets it: `npm pack` builds the tarball
# (prepack: the types generated from the document a built sandbox serves,
# then tsc), a fresh project installs it from the tarball, its test is
# type-checked against the package's .d.ts under strict, and runs with
# node --test against the sandbox the build made. Run after `npm ci` here.
set -euo pipefail
cd "$(dirname "$0")"
sdk=$PWD

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

tarball=$(npm pack --silent --pack-destination "$tmp" | tail -n 1)
echo "pack-test: packed $tarball"
tar -tzf "$tmp/$tarball" | sort

project=$tmp/project
mkdir "$project"
cp pack-test/package.json pack-test/sandbox.test.ts "$project/"
cd "$project"
npm install --no-audit --no-fund "$tmp/$tarball"
# The package's own .d.ts are checked too (no skipLibCheck), with the
# TypeScript and Node.js types sdk-ts pins.
"$sdk/node_modules/.bin/tsc" --strict --noUncheckedIndexedAccess --target es2023 \
  --module nodenext --moduleResolution nodenext --typeRoots "$sdk/node_modules/@types" --types node \
  --outDir out sandbox.test.ts
SANDBOX_BINARY="$sdk/build/sandbox" node --test out/sandbox.test.js
