#!/usr/bin/env bash
# Installs the Debian 12 packages Switchyard needs to build, run and test, if any are missing.
# Safe to run again: it only calls apt when something is not installed.
set -euo pipefail

packages=(
    build-essential cmake pkg-config git
    qt6-base-dev qt6-base-dev-tools qt6-httpserver-dev qt6-charts-dev
    qt6-l10n-tools qt6-tools-dev qt6-tools-dev-tools qt6-qpa-plugins
    libyaml-cpp-dev libcurl4-openssl-dev libsimdjson-dev libgl-dev
    fonts-noto-cjk clang-format
)

missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "Installing missing packages: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
