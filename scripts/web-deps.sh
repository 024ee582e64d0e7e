#!/usr/bin/env bash
# Fetches the dashboard's npm libraries (uPlot, and playwright-core for the
# browser test) into web/node_modules when missing or out of date.
set -euo pipefail
cd "$(dirname "$0")/../web"
stamp=node_modules/.package-lock.json
if [ -f "$stamp" ] && [ "$stamp" -nt package-lock.json ] && [ -f node_modules/uplot/dist/uPlot.iife.min.js ]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "web-deps: npm is missing (install nodejs and npm)" >&2
  exit 1
fi
npm ci --no-audit --no-fund --loglevel=error >/dev/null
