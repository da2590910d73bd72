# Shared helpers for the scripts in scripts/zk (sourced, not run).

ZK_CLASSPATH=/etc/zookeeper/conf:/usr/share/java/zookeeper.jar
ZK_MAIN=org.apache.zookeeper.server.quorum.QuorumPeerMain

# A TCP port on 127.0.0.1 nobody listens on now (and not handed out before by
# this script run).
declare -A ZK_USED_PORTS=()
free_port() {
    local port tries=0
    while (( tries < 200 )); do
        tries=$((tries + 1))
        port=$(( 20000 + (RANDOM * 32768 + RANDOM) % 40000 ))
        [[ -n "${ZK_USED_PORTS[$port]:-}" ]] && continue
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            ZK_USED_PORTS[$port]=1
            echo "$port"
            return 0
        fi
    done
    echo "no free port found" >&2
    return 1
}

# Sends a four-letter word to 127.0.0.1:PORT and prints the answer.
four_letter() {
    local port=$1 word=$2
    timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port && printf '%s' '$word' >&3 && cat <&3" 2>/dev/null || true
}

# Waits (bounded) until the server on PORT answers ruok with imok.
wait_ruok() {
    local port=$1 deadline=$((SECONDS + ${2:-30}))
    while (( SECONDS < deadline )); do
        if [[ "$(four_letter "$port" ruok)" == imok ]]; then
            return 0
        fi
        sleep 0.2
    done
    echo "server on 127.0.0.1:$port did not answer ruok in time" >&2
    return 1
}

# The `Mode:` line of srvr (standalone, leader, follower), or empty.
server_mode() {
    four_letter "$1" srvr | sed -n 's/^Mode: //p'
}

# Starts one server with config CFG, logging to LOG; prints its pid.
start_java() {
    local cfg=$1 log=$2
    shift 2
    nohup java -Xmx256m "$@" -cp "$ZK_CLASSPATH" "$ZK_MAIN" "$cfg" >"$log" 2>&1 </dev/null &
    echo $!
}

# JVM flags: TTL nodes and fast container reaping unless turned off.
jvm_flags() {
    local flags=()
    if [[ "${ZK_EXTENDED_TYPES:-1}" == 1 ]]; then
        flags+=(-Dzookeeper.extendedTypesEnabled=true)
    fi
    flags+=(-Dznode.container.checkIntervalMs="${ZK_CONTAINER_CHECK_MS:-1000}")
    echo "${flags[@]}"
}

# True if PID is alive and runs a ZooKeeper server whose config is under DIR.
is_our_server() {
    local pid=$1 dir=$2
    [[ -r "/proc/$pid/cmdline" ]] || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$ZK_MAIN $dir/"
}
