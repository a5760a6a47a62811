#!/usr/bin/env bash
# System packages the tests and engines use (Debian): espeak-ng (the espeak TTS engine and pilot
# voices of `livefreq bench readback --mode voice`), flite (more pilot voices for that benchmark),
# chromium (the browser client's real-browser test, tests/test_browser.py, driven by playwright)
# and redis-server (tests/test_redis_store.py and the two-node test start their own server on
# loopback; the package's system service is not used).
# Installs only what is missing; needs root (CI runs as root). Without root it says what to run.
set -euo pipefail
need=()
command -v espeak-ng >/dev/null 2>&1 || need+=(espeak-ng)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v flite >/dev/null 2>&1 || need+=(flite)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "livefreq: missing system packages: ${need[*]} (run: sudo apt-get install -y ${need[*]})" >&2
  exit 1
fi
echo "livefreq: installing system packages: ${need[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
