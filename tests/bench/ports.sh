# Sourced by the bench scripts: a free TCP port on the loopback for a server
# they start.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
