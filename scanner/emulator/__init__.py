"""A local HTTPS ARM emulator: the real Azure SDK clients talk to it as to Azure.

Tests, benchmarks and ``azai demo`` use it; it never listens beyond 127.0.0.1.
"""
