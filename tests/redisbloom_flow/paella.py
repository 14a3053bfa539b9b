"""Stand-in for the `paella` module of RedisLabs' readies (a git submodule of
RedisBloom that a plain checkout lacks). RedisBloom's tests/flow/common.py reads
only Platform().os, .osnick and .arch at import; no Bloom test uses them."""
import platform


class Platform:
    def __init__(self):
        self.os = platform.system().lower()
        self.arch = {"x86_64": "x64", "aarch64": "arm64v8"}.get(platform.machine(), platform.machine())
        self.osnick = "unknown"
