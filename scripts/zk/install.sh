#!/usr/bin/env bash
# Installs a real ZooKeeper 3.8 (Debian's `zookeeper` package: server and
# client jars plus a JRE) when it is missing. Idempotent; needs root (CI runs
# as root). Never installs `zookeeperd`, which would start a system service.
set -euo pipefail

JAR=/usr/share/java/zookeeper.jar

# javac: the Java client's smoke (scenarios/tests/java_smoke.rs) compiles
# its program against the package's jars.
if [[ -f "$JAR" ]] && command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1; then
    echo "zookeeper: already installed ($JAR; javac $(javac -version 2>&1 | cut -d' ' -f2))"
    exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
    echo "zookeeper: $JAR missing and not root; run: sudo apt-get update && sudo apt-get install -y zookeeper" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq zookeeper >/dev/null
command -v javac >/dev/null 2>&1 || apt-get install -y -qq default-jdk-headless >/dev/null

if [[ ! -f "$JAR" ]]; then
    echo "zookeeper: installed the package but $JAR is still missing" >&2
    exit 1
fi
echo "zookeeper: installed ($JAR)"
