# Sourced by the bench scripts: a free TCP port on the loopback for a server
# they start, and the wait for that server to answer.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# await_server PORT SECONDS: waits up to SECONDS for PONG on PORT (checking
# twice a second); fails when it never comes.
await_server() {
    local _
    for _ in $(seq $(($2 * 2))); do
        [[ $(redis-cli -p "$1" PING 2>/dev/null) == PONG ]] && return 0
        sleep 0.5
    done
    [[ $(redis-cli -p "$1" PING 2>/dev/null) == PONG ]]
}
