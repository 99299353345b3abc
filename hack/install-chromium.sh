#!/usr/bin/env bash
# install-chromium.sh installs Debian's chromium package, the browser the
# web UI's tests (test/ui) drive headless, unless it is already there.
# Needs root or sudo and Debian's package mirror; nothing else.
set -euo pipefail

if [[ -x "${TOLLGATE_CHROMIUM:-/usr/bin/chromium}" ]]; then
  echo "browser: chromium at ${TOLLGATE_CHROMIUM:-/usr/bin/chromium}"
  exit 0
fi
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  sudo="sudo"
fi
echo "browser: installing Debian's chromium for the UI's browser tests (first time only, about a minute)"
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get install -y chromium >/tmp/tollgate-chromium-install.log 2>&1; then
  $sudo apt-get update >>/tmp/tollgate-chromium-install.log 2>&1
  $sudo apt-get install -y chromium >>/tmp/tollgate-chromium-install.log 2>&1 || {
    cat /tmp/tollgate-chromium-install.log >&2
    exit 1
  }
fi
echo "browser: $(/usr/bin/chromium --version 2>/dev/null || echo chromium installed)"
